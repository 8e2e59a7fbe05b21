# Source: https://rlawjdghek.tistory.com/81?category=818324
"""SoftmaxGAN (Korean blog post): the discriminator loss over the partition function Z_B of real and
generated logits is backwarded with `retain_graph=True` and `optimizer_D.step()` runs; then the
generator loss is built from the same `real_logit` / `gene_logit` and backwarded. The step rewrote
D's weights that those logits' graph saved, so `G_loss.backward()` raises "one of the variables needed
for gradient computation has been modified by an inplace operation". Fix (the post's first one): D is
trained on `G(z).detach()`, and after its step the logits are computed again for the generator loss.
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
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).view(-1)


def log_partition(real_logit, gene_logit):
    # Z_B = sum over the real and generated batch of exp(-D(x))
    return torch.log(torch.exp(-real_logit).sum() + torch.exp(-gene_logit).sum())


nz, dim, bs = 8, 16, 4
G, D = Generator(nz, dim), Discriminator(dim)
optimizer_G = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.5, 0.999))
optimizer_D = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.5, 0.999))
loader = [torch.randn(bs, dim) for _ in range(3)]

for epoch in range(2):
    for real_img in loader:
        latent_z = torch.randn(bs, nz)
        gene_img = G(latent_z)
        real_logit = D(real_img)
        gene_logit = D(gene_img)
        Z_B = log_partition(real_logit, gene_logit)

        # train D
        D_loss = real_logit.sum() / bs + Z_B
        optimizer_D.zero_grad()
        D_loss.backward(retain_graph=True)
        optimizer_D.step()

        # train G with the logits computed before D's step
        G_loss = (real_logit.sum() + gene_logit.sum()) / (2 * bs) + Z_B
        optimizer_G.zero_grad()
        G_loss.backward()  # expect: GG103
        optimizer_G.step()
    print(epoch, D_loss.item(), G_loss.item())
