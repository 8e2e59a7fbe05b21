"""A GAN step that feeds the undetached fake to the discriminator loss and then reuses it for the
generator loss after the discriminator's backward."""
import torch
import torch.nn as nn

G = nn.Linear(2, 2)
D = nn.Linear(2, 1)
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
for step in range(2):
    fake = G(torch.randn(8, 2))
    d_loss = D(fake).mean() - D(torch.randn(8, 2)).mean()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = -D(fake).mean()
    opt_g.zero_grad()
    g_loss.backward()  # expect: GG101
    opt_g.step()
