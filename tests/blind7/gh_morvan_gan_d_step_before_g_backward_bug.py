# Source: https://github.com/MorvanZhou/PyTorch-Tutorial/issues/89
"""MorvanZhou's PyTorch-Tutorial 406_GAN.py as it stood when the issue was filed (PyTorch 1.5):
the generator G paints a batch from random ideas, the discriminator D scores the artist's
paintings and G's, and both losses come from the same forward. D_loss is backwarded with
retain_graph=True and opt_D.step() updates D; then G_loss.backward() walks D's graph again and
finds D's weights (saved by the forward, "output 0 of TBackward") changed by the step: "one of the
variables needed for gradient computation has been modified by an inplace operation". The
matplotlib plotting is left out; the painting range and batch are the tutorial's, smaller."""
import numpy as np
import torch
import torch.nn as nn

BATCH_SIZE = 16
LR_G = 0.0001           # learning rate for generator
LR_D = 0.0001           # learning rate for discriminator
N_IDEAS = 5             # think of this as number of ideas for generating an art work (Generator)
ART_COMPONENTS = 15     # it could be total point G can draw in the canvas
PAINT_POINTS = np.vstack([np.linspace(-1, 1, ART_COMPONENTS) for _ in range(BATCH_SIZE)])


def artist_works():     # painting from the famous artist (real target)
    a = np.random.uniform(1, 2, size=BATCH_SIZE)[:, np.newaxis]
    paintings = a * np.power(PAINT_POINTS, 2) + (a - 1)
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

for step in range(20):
    artist_paintings = artist_works()           # real painting from artist
    G_ideas = torch.randn(BATCH_SIZE, N_IDEAS)  # random ideas
    G_paintings = G(G_ideas)                    # fake painting from G (random ideas)

    prob_artist0 = D(artist_paintings)          # D try to increase this prob
    prob_artist1 = D(G_paintings)               # D try to reduce this prob

    D_loss = - torch.mean(torch.log(prob_artist0) + torch.log(1. - prob_artist1))
    G_loss = torch.mean(torch.log(1. - prob_artist1))

    opt_D.zero_grad()
    D_loss.backward(retain_graph=True)          # reusing computational graph
    opt_D.step()

    opt_G.zero_grad()
    G_loss.backward()  # expect: GG103
    opt_G.step()

    if step % 5 == 0:
        print(step, prob_artist0.data.numpy().mean(), -D_loss.data.numpy())
