# Source: https://noteforstudy.tistory.com/entry/DCGAN-pytorch-DCGAN-%ED%8A%9C%ED%86%A0%EB%A6%AC%EC%96%BC-%EC%84%A4%EB%AA%85
"""The Korean post walking through the PyTorch DCGAN tutorial's training loop explains why, unlike
the real batch, the fake images go into netD with .detach() in the discriminator step: fake comes
from netG, and the discriminator's loss must not run back through the generator. The tutorial's
loop (errD_real, errD_fake, optimizerD, then errG on netD(fake)) with small dense stand-ins for
the DCGAN nets and the detach left out: errD_fake.backward() frees the generator's graph, and
errG.backward() runs into it again."""
import torch
import torch.nn as nn

torch.manual_seed(0)
nz, img = 8, 16
real_label, fake_label = 1.0, 0.0

netG = nn.Sequential(nn.Linear(nz, 32), nn.BatchNorm1d(32), nn.ReLU(True), nn.Linear(32, img), nn.Tanh())
netD = nn.Sequential(nn.Linear(img, 32), nn.LeakyReLU(0.2, inplace=True), nn.Linear(32, 1), nn.Sigmoid())
criterion = nn.BCELoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
dataloader = [(torch.rand(6, img) * 2 - 1,) for _ in range(2)]

for epoch in range(1):
    for i, data in enumerate(dataloader, 0):
        # (1) Update D network
        netD.zero_grad()
        real_cpu = data[0]
        b_size = real_cpu.size(0)
        label = torch.full((b_size,), real_label, dtype=torch.float)
        output = netD(real_cpu).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        noise = torch.randn(b_size, nz)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        errD = errD_real + errD_fake
        optimizerD.step()
        # (2) Update G network
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        errG.backward()  # expect: GG101
        optimizerG.step()
        print(epoch, i, errD.item(), errG.item())
