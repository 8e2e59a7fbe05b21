"""WGAN-GP trainer class with a critic loop: the generator batch is drawn once per generator step
and not detached, so the second critic update walks the freed generator graph."""
import torch
import torch.nn as nn
from torch import autograd


class WGANGP:
    def __init__(self):
        self.G = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 4))
        self.C = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=1e-4, betas=(0.5, 0.9))
        self.opt_c = torch.optim.Adam(self.C.parameters(), lr=1e-4, betas=(0.5, 0.9))

    def penalty(self, real, fake):
        eps = torch.rand(real.size(0), 1)
        mix = eps * real + (1 - eps) * fake
        out = self.C(mix)
        g = autograd.grad(out.sum(), mix, create_graph=True)[0]
        return ((g.norm(2, dim=1) - 1) ** 2).mean()

    def critic_step(self, real, fake):
        loss = self.C(fake).mean() - self.C(real).mean() + 10 * self.penalty(real, fake)
        self.opt_c.zero_grad()
        loss.backward()  # expect: GG101
        self.opt_c.step()

    def train(self, n_iters=2, n_critic=2):
        for it in range(n_iters):
            fake = self.G(torch.randn(6, 3))
            for _ in range(n_critic):
                self.critic_step(torch.randn(6, 4), fake)
            g_loss = -self.C(self.G(torch.randn(6, 3))).mean()
            self.opt_g.zero_grad()
            g_loss.backward()
            self.opt_g.step()


WGANGP().train()
