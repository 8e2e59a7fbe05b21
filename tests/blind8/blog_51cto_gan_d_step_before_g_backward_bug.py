# Source: https://blog.51cto.com/u_16213604/11952018
"""The 51CTO post on "one of the variables needed for gradient computation has been modified by an
inplace operation", which "is very easy to hit when training adversarial networks" and comes from
not knowing PyTorch's computation graph: leaf and non-leaf tensors, graphs freed after backward,
and optimizer steps that update parameters in place. The stored excerpt stops before the post's
training code; reconstructed as the loop the post describes: one forward pass of G and D per
batch, the discriminator loss backwarded with `retain_graph=True` and `optimizer_D.step()` run,
then the generator loss, built from the same D outputs, backwarded through D's updated weights."""
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
    d_real, d_fake = D(real), D(fake)

    loss_D = criterion(d_real, ones) + criterion(d_fake, zeros)
    optimizer_D.zero_grad()
    loss_D.backward(retain_graph=True)
    optimizer_D.step()

    loss_G = criterion(d_fake, ones)
    optimizer_G.zero_grad()
    loss_G.backward()  # expect: GG103
    optimizer_G.step()
    print(step, loss_D.item(), loss_G.item())
