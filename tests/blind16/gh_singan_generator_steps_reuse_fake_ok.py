# Source: https://github.com/tamarott/SinGAN/issues/110
"""SinGAN's `train_single_scale` (main_train.py) on torch >= 1.5: the discriminator steps make
`fake = netG(noise.detach(), prev)`; here each generator step makes its own `fake` from the
current weights before `errG.backward()` and `optimizerG.step()` (the fix for the
"modified by an inplace operation" error the issue reports), so no step walks a graph whose
saved weights an earlier step rewrote; no loss is backwarded twice, so no backward keeps its graph
(the repository's `retain_graph=True` everywhere is dropped). One
scale of SinGAN with small conv blocks, a random image, and the WGAN-GP losses of the repository
(the reconstruction loss kept, the gradient penalty left out)."""
import torch
import torch.nn as nn
import torch.optim as optim


class ConvBlock(nn.Sequential):
    def __init__(self, in_channel, out_channel, ker_size, padd, stride):
        super(ConvBlock, self).__init__()
        self.add_module('conv', nn.Conv2d(in_channel, out_channel, kernel_size=ker_size, stride=stride, padding=padd))
        self.add_module('norm', nn.BatchNorm2d(out_channel))
        self.add_module('LeakyRelu', nn.LeakyReLU(0.2, inplace=True))


class WDiscriminator(nn.Module):
    def __init__(self, nc_im=3, nfc=8):
        super(WDiscriminator, self).__init__()
        self.head = ConvBlock(nc_im, nfc, 3, 1, 1)
        self.body = nn.Sequential(ConvBlock(nfc, nfc, 3, 1, 1), ConvBlock(nfc, nfc, 3, 1, 1))
        self.tail = nn.Conv2d(nfc, 1, kernel_size=3, stride=1, padding=1)

    def forward(self, x):
        return self.tail(self.body(self.head(x)))


class GeneratorConcatSkip2CleanAdd(nn.Module):
    def __init__(self, nc_im=3, nfc=8):
        super(GeneratorConcatSkip2CleanAdd, self).__init__()
        self.head = ConvBlock(nc_im, nfc, 3, 1, 1)
        self.body = nn.Sequential(ConvBlock(nfc, nfc, 3, 1, 1), ConvBlock(nfc, nfc, 3, 1, 1))
        self.tail = nn.Sequential(nn.Conv2d(nfc, nc_im, kernel_size=3, stride=1, padding=1), nn.Tanh())

    def forward(self, x, y):
        x = self.tail(self.body(self.head(x)))
        return x + y


def train_single_scale(netD, netG, real, niter=2, Dsteps=3, Gsteps=3, alpha=10):
    optimizerD = optim.Adam(netD.parameters(), lr=5e-4, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=5e-4, betas=(0.5, 0.999))
    z_opt = torch.randn_like(real)
    loss = nn.MSELoss()
    for epoch in range(niter):
        noise_ = torch.randn_like(real)
        prev = torch.zeros_like(real)
        # (1) Update D network: maximize D(x) + D(G(z))
        for j in range(Dsteps):
            netD.zero_grad()
            output = netD(real)
            errD_real = -output.mean()
            errD_real.backward()
            noise = noise_ + prev
            fake = netG(noise.detach(), prev)
            output = netD(fake.detach())
            errD_fake = output.mean()
            errD_fake.backward()
            optimizerD.step()
        # (2) Update G network: maximize D(G(z))
        for j in range(Gsteps):
            netG.zero_grad()
            fake = netG(noise.detach(), prev)
            output = netD(fake)
            errG = -output.mean()
            errG.backward()
            rec_loss = alpha * loss(netG(z_opt.detach(), prev), real)
            rec_loss.backward()
            optimizerG.step()
        print(epoch, errD_real.item(), errD_fake.item(), errG.item(), rec_loss.item())


torch.manual_seed(0)
real = torch.rand(1, 3, 16, 16) * 2 - 1
train_single_scale(WDiscriminator(), GeneratorConcatSkip2CleanAdd(), real)
