# Source: https://noteforstudy.tistory.com/entry/DCGAN-pytorch-DCGAN-%ED%8A%9C%ED%86%A0%EB%A6%AC%EC%96%BC-%EC%84%A4%EB%AA%85
"""The tutorial's loop as the post explains it: the discriminator step classifies
fake.detach(), so its backward stops at the generator's output, and the generator step backwards
errG through a fresh netD(fake) and the still intact generator graph."""
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
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        errD = errD_real + errD_fake
        optimizerD.step()
        # (2) Update G network
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        errG.backward()
        optimizerG.step()
        print(epoch, i, errD.item(), errG.item())
