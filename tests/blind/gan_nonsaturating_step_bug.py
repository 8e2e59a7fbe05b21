# Source: https://php.bkmy88.com/faq/1575425.html (a user's GAN whose loss_nonsaturating computes
# both losses from one generator pass, and the answer to its in-place error)
"""GAN trainer whose loss_nonsaturating(d, g, x_real) returns the discriminator's and the
generator's losses from one pass: d_loss.backward(retain_graph=True), then d_optimizer.step()
updates the discriminator's weights in place, and g_loss.backward() needs the weights its
d(gz) saved."""
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


def loss_nonsaturating(d, g, x_real, *, device):
    z = torch.randn(x_real.shape[0], g.z_dim, device=device)
    gz = g(z)
    dgz = F.sigmoid(d(gz))
    dx = d(x_real)
    real_label = torch.ones(x_real.shape[0], device=device)
    fake_label = torch.zeros(x_real.shape[0], device=device)
    bce_loss = F.binary_cross_entropy_with_logits
    g_loss = F.binary_cross_entropy(dgz, real_label).mean()
    d_loss = bce_loss(dx, real_label).mean() + F.binary_cross_entropy(dgz, fake_label).mean()
    return d_loss, g_loss


device = "cpu"
g, d = Generator(), Discriminator()
g_optimizer = torch.optim.Adam(g.parameters(), lr=1e-3, betas=(0.5, 0.999))
d_optimizer = torch.optim.Adam(d.parameters(), lr=1e-3, betas=(0.5, 0.999))
for step in range(2):
    x_real = torch.randn(8, 2) * 0.5 + 1.0
    d_loss, g_loss = loss_nonsaturating(d, g, x_real, device=device)
    d_optimizer.zero_grad()
    d_loss.backward(retain_graph=True)
    d_optimizer.step()
    g_optimizer.zero_grad()
    g_loss.backward()  # expect: GG103
    g_optimizer.step()
