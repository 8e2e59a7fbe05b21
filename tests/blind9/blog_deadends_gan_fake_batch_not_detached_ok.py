# Source: https://deadends.dev/cuda/backward-through-graph-twice/cuda12-linux
"""The entry's workaround for GAN training: the discriminator sees fake_images.detach(), so its
backward stops at the generator's output, and the generator's loss (a separate forward through
D) walks the generator's graph once."""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, z_dim=8, img_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, img_dim), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, img_dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(img_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


generator, discriminator = Generator(), Discriminator()
opt_g = torch.optim.Adam(generator.parameters(), lr=2e-4)
opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-4)
criterion = nn.BCEWithLogitsLoss()

for step in range(3):
    real_images = torch.rand(8, 16) * 2 - 1
    z = torch.randn(8, 8)
    fake_images = generator(z)
    ones, zeros = torch.ones(8, 1), torch.zeros(8, 1)

    opt_d.zero_grad()
    d_loss = criterion(discriminator(real_images), ones) + criterion(discriminator(fake_images.detach()), zeros)
    d_loss.backward()
    opt_d.step()

    opt_g.zero_grad()
    g_loss = criterion(discriminator(fake_images), ones)
    g_loss.backward()
    opt_g.step()
    print(step, d_loss.item(), g_loss.item())
