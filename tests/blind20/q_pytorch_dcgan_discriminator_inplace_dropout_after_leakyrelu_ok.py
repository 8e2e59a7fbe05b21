# Source: https://github.com/pytorch/pytorch/issues/72992
"""pytorch/pytorch issue 72992 ("dropout(inplace=True) raises error"): the reporter's GAN
discriminator is a DCGAN-style `nn.Sequential` with

    nn.Conv2d(...., bias=False),
    nn.LeakyReLU(0.2, inplace=True),
    nn.Dropout(0.25, inplace=True),
    nn.Conv2d(....., bias=False),

and "invoking the nn.Dropout(..., inplace=True) will make the training crash". The in-place
LeakyReLU saves its own output for the backward (it cannot keep the input it overwrote); the
in-place Dropout then overwrites that output again, so the discriminator's `errD_real.backward()`
raises "one of the variables needed for gradient computation has been modified by an inplace
operation ... is at version 2; expected version 1".

Fix (in the _ok twin): `nn.Dropout(0.25)` (not in place); the LeakyReLU may stay in place.

The reporter gave only the layer stack; the rest follows the PyTorch DCGAN example (Generator,
`netD`/`netG`, BCELoss, the D-then-G update) with tiny sizes and random "real" images.
"""
import torch
import torch.nn as nn
import torch.optim as optim

nz, ngf, ndf, nc = 8, 8, 8, 1


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh()
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Dropout(0.25),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Dropout(0.25),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid()
        )

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


torch.manual_seed(0)
netG, netD = Generator(), Discriminator()
criterion = nn.BCELoss()
optimizerD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
real_label, fake_label = 1., 0.
dataloader = [torch.rand(4, nc, 16, 16) * 2 - 1 for _ in range(2)]

for epoch in range(2):
    for i, real_cpu in enumerate(dataloader):
        ############################
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        ###########################
        netD.zero_grad()
        batch_size = real_cpu.size(0)
        label = torch.full((batch_size,), real_label)
        output = netD(real_cpu)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()

        noise = torch.randn(batch_size, nz, 1, 1)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        errD = errD_real + errD_fake
        optimizerD.step()

        ############################
        # (2) Update G network: maximize log(D(G(z)))
        ###########################
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        optimizerG.step()
        print('[%d/%d][%d] Loss_D: %.4f Loss_G: %.4f D(x): %.4f' % (epoch, 2, i, errD.item(), errG.item(), D_x))
