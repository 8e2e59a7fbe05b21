# Source: https://rlawjdghek.tistory.com/33
"""A Korean blog note on `loss.backward(retain_graph=True)` when training a basic GAN: the discriminator
is trained first on `gene_img = G(latent_z)` without `.detach()`, and the generator is then trained on
the same `gene_img`. Fixed as the post's point 3: `D_loss.backward(retain_graph=True)` keeps G's part of the graph, which
`G_loss.backward()` then walks once (D's new forward on the stepped weights is a fresh graph).
Small MLP generator/discriminator on random data, CPU.
"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, nz=8, dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(), nn.Linear(32, dim), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


nz, dim, bs = 8, 16, 4
G, D = Generator(nz, dim), Discriminator(dim)
criterion = nn.BCELoss()
optimizer_G = torch.optim.Adam(G.parameters(), lr=2e-4)
optimizer_D = torch.optim.Adam(D.parameters(), lr=2e-4)
loader = [torch.randn(bs, dim) for _ in range(3)]
ones, zeros = torch.ones(bs, 1), torch.zeros(bs, 1)

for real_img in loader:
    latent_z = torch.randn(bs, nz)
    gene_img = G(latent_z)

    # train the discriminator first
    D_loss = criterion(D(real_img), ones) + criterion(D(gene_img), zeros)
    optimizer_D.zero_grad()
    D_loss.backward(retain_graph=True)
    optimizer_D.step()

    # then the generator, on the same generated batch
    G_loss = criterion(D(gene_img), ones)
    optimizer_G.zero_grad()
    G_loss.backward()
    optimizer_G.step()
    print(D_loss.item(), G_loss.item())
