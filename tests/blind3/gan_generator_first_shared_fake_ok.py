# Source: https://whosebug.com/question/5232549/How-does-PyTorch-s-loss-backward-work-when-retain-graph-True-is-specified
"""The generator-first GAN update, fixed as the answer explains instead of retain_graph=True (which, the
answer says, only hides the error): the discriminator's loss scores the generated batch detached,
`disc(fake.detach())`, so loss_d has a graph of its own through the discriminator only."""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, nz=8, nout=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(), nn.Linear(32, nout), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, nin=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(nin, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


gen, disc = Generator(), Discriminator()
optim_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
optim_d = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
criterion = nn.BCEWithLogitsLoss()

for step in range(3):
    real = torch.randn(8, 16)
    z = torch.randn(8, 8)

    # computing loss_g and loss_d...
    fake = gen(z)
    pred_fake = disc(fake)
    pred_real = disc(real)
    loss_g = criterion(pred_fake, torch.ones_like(pred_fake))
    pred_fake_d = disc(fake.detach())
    loss_d = (criterion(pred_real, torch.ones_like(pred_real)) +
              criterion(pred_fake_d, torch.zeros_like(pred_fake_d))) / 2

    optim_g.zero_grad()
    loss_g.backward()
    optim_g.step()

    optim_d.zero_grad()
    loss_d.backward()
    optim_d.step()
    print(step, loss_g.item(), loss_d.item())
