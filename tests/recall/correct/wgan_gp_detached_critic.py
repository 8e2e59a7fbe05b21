"""WGAN-GP trainer: the critic loop scores a detached fake batch; penalty via create_graph=True."""
import torch
import torch.nn as nn
from torch import autograd

G = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 4))
C = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.5, 0.9))
opt_c = torch.optim.Adam(C.parameters(), lr=1e-4, betas=(0.5, 0.9))


def penalty(real, fake):
    eps = torch.rand(real.size(0), 1)
    mix = (eps * real + (1 - eps) * fake).requires_grad_(True)
    g = autograd.grad(C(mix).sum(), mix, create_graph=True)[0]
    return ((g.norm(2, dim=1) - 1) ** 2).mean()


for it in range(2):
    fake = G(torch.randn(6, 3)).detach()
    for _ in range(2):
        real = torch.randn(6, 4)
        loss = C(fake).mean() - C(real).mean() + 10 * penalty(real, fake)
        opt_c.zero_grad()
        loss.backward()
        opt_c.step()
    g_loss = -C(G(torch.randn(6, 3))).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
