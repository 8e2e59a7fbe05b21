# Source: https://blog.51cto.com/u_16213604/11952018
"""The fix the post's explanation leads to: the discriminator is trained on `fake.detach()`
(its backward then needs no retained graph), and after `optimizer_D.step()` the generator loss is
built from a fresh `D(fake)`, a graph made with D's updated weights."""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, z_dim, x_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(), nn.Linear(32, x_dim), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, x_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(x_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


z_dim, x_dim, batch = 8, 16, 32
G, D = Generator(z_dim, x_dim), Discriminator(x_dim)
optimizer_G = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizer_D = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
criterion = nn.BCELoss()
ones, zeros = torch.ones(batch, 1), torch.zeros(batch, 1)

for step in range(3):
    real = torch.randn(batch, x_dim)
    fake = G(torch.randn(batch, z_dim))
    loss_D = criterion(D(real), ones) + criterion(D(fake.detach()), zeros)
    optimizer_D.zero_grad()
    loss_D.backward()
    optimizer_D.step()

    loss_G = criterion(D(fake), ones)
    optimizer_G.zero_grad()
    loss_G.backward()
    optimizer_G.step()
    print(step, loss_D.item(), loss_G.item())
