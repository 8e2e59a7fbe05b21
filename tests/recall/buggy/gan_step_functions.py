"""Least-squares GAN written with module-level step functions; the generator's output is made once
per iteration and handed to both steps, the generator step first."""
import torch
import torch.nn as nn

netG = nn.Sequential(nn.Linear(2, 12), nn.Tanh(), nn.Linear(12, 2))
netD = nn.Sequential(nn.Linear(2, 12), nn.Tanh(), nn.Linear(12, 1))
optG = torch.optim.RMSprop(netG.parameters(), lr=5e-4)
optD = torch.optim.RMSprop(netD.parameters(), lr=5e-4)


def generator_step(fake):
    optG.zero_grad()
    loss = 0.5 * ((netD(fake) - 1) ** 2).mean()
    loss.backward()
    optG.step()


def discriminator_step(real, fake):
    optD.zero_grad()
    loss = 0.5 * ((netD(real) - 1) ** 2).mean() + 0.5 * (netD(fake) ** 2).mean()
    loss.backward()  # expect: GG101
    optD.step()


for it in range(3):
    real = torch.randn(16, 2) * 0.3 + torch.tensor([1.0, -1.0])
    fake = netG(torch.randn(16, 2))
    generator_step(fake)
    discriminator_step(real, fake)
