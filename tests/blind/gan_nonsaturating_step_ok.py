# Source: https://php.bkmy88.com/faq/1575425.html (a user's GAN whose loss_nonsaturating computes
# both losses from one generator pass, and the answer to its in-place error)
"""The same GAN with the answer's separation: the discriminator's loss scores gz.detach(), and the
generator's loss is computed after the discriminator's step, from a fresh d(gz), so no backward
needs weights that a step has overwritten since they were saved."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Generator(nn.Module):
    def __init__(self, z_dim=4):
        super().__init__()
        self.z_dim = z_dim
        self.net = nn.Sequential(nn.Linear(z_dim, 16), nn.ReLU(), nn.Linear(16, 2))

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x).squeeze(1)


def d_loss_nonsaturating(d, gz, x_real, *, device):
    dgz = F.sigmoid(d(gz.detach()))
    dx = d(x_real)
    real_label = torch.ones(x_real.shape[0], device=device)
    fake_label = torch.zeros(x_real.shape[0], device=device)
    return F.binary_cross_entropy_with_logits(dx, real_label).mean() + F.binary_cross_entropy(dgz, fake_label).mean()


def g_loss_nonsaturating(d, gz, *, device):
    dgz = F.sigmoid(d(gz))
    return F.binary_cross_entropy(dgz, torch.ones(gz.shape[0], device=device)).mean()


device = "cpu"
g, d = Generator(), Discriminator()
g_optimizer = torch.optim.Adam(g.parameters(), lr=1e-3, betas=(0.5, 0.999))
d_optimizer = torch.optim.Adam(d.parameters(), lr=1e-3, betas=(0.5, 0.999))
for step in range(2):
    x_real = torch.randn(8, 2) * 0.5 + 1.0
    gz = g(torch.randn(x_real.shape[0], g.z_dim, device=device))
    d_loss = d_loss_nonsaturating(d, gz, x_real, device=device)
    d_optimizer.zero_grad()
    d_loss.backward()
    d_optimizer.step()
    g_loss = g_loss_nonsaturating(d, gz, device=device)
    g_optimizer.zero_grad()
    g_loss.backward()
    g_optimizer.step()
