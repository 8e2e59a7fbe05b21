# Source: https://github.com/pytorch/examples/issues/116 (comment by sunshineatnoon: "Missed detach
# when implementing dcgan in pytorch, and it gives me this error: Trying to backward through the
# graph second time")
"""DCGAN step as in pytorch/examples' dcgan/main.py: the discriminator is trained on
netD(fake.detach()), so the generator's graph is still there for errG.backward()."""
import torch
import torch.nn as nn

nz, ngf, ndf, nc = 8, 4, 4, 1
real_label, fake_label = 1.0, 0.0

netG = nn.Sequential(
    nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
    nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False), nn.Tanh())
netD = nn.Sequential(
    nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(ndf, 1, 4, 1, 0, bias=False), nn.Sigmoid())
criterion = nn.BCELoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))

for i in range(2):
    real_cpu = torch.randn(3, nc, 8, 8)
    batch_size = real_cpu.size(0)
    # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
    netD.zero_grad()
    label = torch.full((batch_size,), real_label)
    output = netD(real_cpu).view(-1)
    errD_real = criterion(output, label)
    errD_real.backward()

    noise = torch.randn(batch_size, nz, 1, 1)
    fake = netG(noise)
    label.fill_(fake_label)
    output = netD(fake.detach()).view(-1)
    errD_fake = criterion(output, label)
    errD_fake.backward()
    optimizerD.step()

    # (2) Update G network: maximize log(D(G(z)))
    netG.zero_grad()
    label.fill_(real_label)
    output = netD(fake).view(-1)
    errG = criterion(output, label)
    errG.backward()
    optimizerG.step()
