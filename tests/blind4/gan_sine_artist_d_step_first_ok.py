# Source: https://github.com/pytorch/pytorch/issues/39141
"""The sin(x) GAN of MorvanZhou's 406_GAN tutorial with the fix that fits the cause the thread
identifies (opt_D.step() changes D weights that G_loss's backward still needs; the tutorial was
updated for it in MorvanZhou/PyTorch-Tutorial#91): G is updated first, from D's score of its
paintings, and D's step then scores G_paintings.detach(), so no backward needs D weights that an
optimizer step has already changed, and no graph has to be retained. Sizes are
reduced, matplotlib is left out."""
import numpy as np
import torch
import torch.nn as nn

# Hyper Parameters
BATCH_SIZE = 16
LR_G = 0.0001           # learning rate for generator
LR_D = 0.0001           # learning rate for discriminator
N_IDEAS = 5             # think of this as number of ideas for generating an art work (Generator)
ART_COMPONENTS = 15     # it could be total point G can draw in the canvas
PAINT_POINTS = np.vstack([np.linspace(-1, 1, ART_COMPONENTS) for _ in range(BATCH_SIZE)])


def artist_works():     # painting from the famous artist (real target)
    r = 0.02 * np.random.randn(1, ART_COMPONENTS)
    paintings = np.sin(PAINT_POINTS * np.pi) + r
    paintings = torch.from_numpy(paintings).float()
    return paintings


G = nn.Sequential(                      # Generator
    nn.Linear(N_IDEAS, 32),             # random ideas (could from normal distribution)
    nn.ReLU(),
    nn.Linear(32, ART_COMPONENTS),      # making a painting from these random ideas
)

D = nn.Sequential(                      # Discriminator
    nn.Linear(ART_COMPONENTS, 32),      # receive art work either from the famous artist or a newbie like G
    nn.ReLU(),
    nn.Linear(32, 1),
    nn.Sigmoid(),                       # tell the probability that the art work is made by artist
)

opt_D = torch.optim.Adam(D.parameters(), lr=LR_D)
opt_G = torch.optim.Adam(G.parameters(), lr=LR_G)

for step in range(5):
    artist_paintings = artist_works()           # real painting from artist
    G_ideas = torch.randn(BATCH_SIZE, N_IDEAS)  # random ideas
    G_paintings = G(G_ideas)                    # fake painting from G (random ideas)

    prob_artist1 = D(G_paintings)               # G tries to fool D
    G_loss = torch.mean(torch.log(1. - prob_artist1))
    opt_G.zero_grad()
    G_loss.backward()
    opt_G.step()

    prob_artist0 = D(artist_paintings)          # D try to increase this prob
    prob_artist1 = D(G_paintings.detach())      # D try to reduce this prob
    D_loss = - torch.mean(torch.log(prob_artist0) + torch.log(1. - prob_artist1))
    opt_D.zero_grad()
    D_loss.backward()
    opt_D.step()
