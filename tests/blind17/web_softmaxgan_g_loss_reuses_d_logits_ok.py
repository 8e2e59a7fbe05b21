# Source: https://rlawjdghek.tistory.com/81?category=818324
"""SoftmaxGAN (Korean blog post), fixed as the post's first solution: D is trained on the detached
generated batch (no `retain_graph=True` needed), and after `optimizer_D.step()` the real and generated
logits are computed again with the updated D for the generator loss, so `G_loss.backward()` walks a
fresh graph. Small MLP generator/discriminator on random data, CPU.
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

        # train D on the detached generated batch
        real_logit = D(real_img)
        gene_logit = D(gene_img.detach())
        D_loss = real_logit.sum() / bs + log_partition(real_logit, gene_logit)
        optimizer_D.zero_grad()
        D_loss.backward()
        optimizer_D.step()

        # train G with logits from the updated D
        real_logit = D(real_img)
        gene_logit = D(gene_img)
        G_loss = (real_logit.sum() + gene_logit.sum()) / (2 * bs) + log_partition(real_logit, gene_logit)
        optimizer_G.zero_grad()
        G_loss.backward()
        optimizer_G.step()
    print(epoch, D_loss.item(), G_loss.item())
