# Source: https://github.com/cy-xu/simple_CycleGAN/issues/3
"""simple_CycleGAN's train(): both generator cycles are backwarded with retain_graph=True and
stepped (optimizer_g over netG_x and netG_y), then netD_x scores fake_y, the first cycle's output,
without detaching it. loss_D_x.backward() walks on into netG_x's retained graph, whose weights the
two optimizer_g steps changed in place ("[3, 64, 7, 7] is at version 3; expected version 1", the
generator's last 7x7 conv). The networks are small local stand-ins for model.py's
ResnetGenerator / NLayerDiscriminator / GANLoss (lsgan); the dataset is random unaligned images."""
import itertools

import torch as t
import torch.nn as nn


class Config(object):
    def __init__(self):
        self.input_nc = 3
        self.output_nc = 3
        self.ngf = 8
        self.ndf = 8
        self.n_blocks = 1
        self.beta1 = 0.5
        self.batch_size = 1
        self.max_epochs = 1
        self.g_lr = 2e-4
        self.d_lr = 2e-4
        self.crop_size = 16


class ResnetBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv_block = nn.Sequential(
            nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3), nn.InstanceNorm2d(dim), nn.ReLU(True),
            nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3), nn.InstanceNorm2d(dim))

    def forward(self, x):
        return x + self.conv_block(x)


class ResnetGenerator(nn.Module):
    def __init__(self, opt):
        super().__init__()
        ngf = opt.ngf
        model = [nn.ReflectionPad2d(3), nn.Conv2d(opt.input_nc, ngf, 7), nn.InstanceNorm2d(ngf), nn.ReLU(True),
                 nn.Conv2d(ngf, ngf * 2, 3, stride=2, padding=1), nn.InstanceNorm2d(ngf * 2), nn.ReLU(True)]
        model += [ResnetBlock(ngf * 2) for _ in range(opt.n_blocks)]
        model += [nn.ConvTranspose2d(ngf * 2, ngf, 3, stride=2, padding=1, output_padding=1),
                  nn.InstanceNorm2d(ngf), nn.ReLU(True),
                  nn.ReflectionPad2d(3), nn.Conv2d(ngf, opt.output_nc, 7), nn.Tanh()]
        self.model = nn.Sequential(*model)

    def forward(self, input):
        return self.model(input)


class NLayerDiscriminator(nn.Module):
    def __init__(self, opt):
        super().__init__()
        ndf = opt.ndf
        self.model = nn.Sequential(
            nn.Conv2d(opt.input_nc, ndf, 4, stride=2, padding=1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ndf, ndf * 2, 4, stride=2, padding=1), nn.InstanceNorm2d(ndf * 2), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ndf * 2, 1, 4, stride=1, padding=1))

    def forward(self, input):
        return self.model(input)


class GANLoss(nn.Module):
    def __init__(self, gan_mode='lsgan'):
        super().__init__()
        self.register_buffer('real_label', t.tensor(1.0))
        self.register_buffer('fake_label', t.tensor(0.0))
        self.loss = nn.MSELoss()

    def __call__(self, prediction, target_is_real):
        target = self.real_label if target_is_real else self.fake_label
        return self.loss(prediction, target.expand_as(prediction))


def create_dataset(opt, n=2):
    return [{'A': t.randn(opt.batch_size, 3, opt.crop_size, opt.crop_size),
             'B': t.randn(opt.batch_size, 3, opt.crop_size, opt.crop_size)} for _ in range(n)]


def train():
    opt = Config()
    dataset = create_dataset(opt)

    netG_x = ResnetGenerator(opt)
    netG_y = ResnetGenerator(opt)
    netD_x = NLayerDiscriminator(opt)
    netD_y = NLayerDiscriminator(opt)

    optimizer_g = t.optim.Adam(itertools.chain(netG_x.parameters(), netG_y.parameters()),
                               lr=opt.g_lr, betas=(opt.beta1, 0.999))
    optimizer_d = t.optim.Adam(itertools.chain(netD_x.parameters(), netD_y.parameters()),
                               lr=opt.d_lr, betas=(opt.beta1, 0.999))

    lambda_X = 10.0
    lambda_Y = 10.0
    lambda_identity = 0.5
    criterionGAN = GANLoss(gan_mode='lsgan')
    criterionCycle = nn.L1Loss()
    criterionIdt = nn.L1Loss()

    for epoch in range(opt.max_epochs):
        for i, data in enumerate(dataset):
            real_x = data['A']
            real_y = data['B']

            # X -> Y' -> X^ cycle
            optimizer_g.zero_grad()
            fake_y = netG_x(real_x)
            prediction = netD_x(fake_y)
            loss_G_X = criterionGAN(prediction, True)
            x_hat = netG_y(fake_y)
            loss_cycle_X = criterionCycle(x_hat, real_x) * lambda_X
            if lambda_identity > 0:
                idt_x = netG_x(real_y)
                loss_idt_x = criterionIdt(idt_x, real_y) * lambda_Y * lambda_identity
            else:
                loss_idt_x = 0.
            loss_X = loss_G_X + loss_cycle_X + loss_idt_x
            loss_X.backward(retain_graph=True)
            optimizer_g.step()

            # Y -> X' -> Y^ cycle
            optimizer_g.zero_grad()
            fake_x = netG_y(real_y)
            prediction = netD_y(fake_x)
            loss_G_Y = criterionGAN(prediction, True)
            y_hat = netG_x(fake_x)
            loss_cycle_Y = criterionCycle(y_hat, real_y) * lambda_Y
            if lambda_identity > 0:
                idt_y = netG_y(real_x)
                loss_idt_y = criterionIdt(idt_y, real_x) * lambda_X * lambda_identity
            else:
                loss_idt_y = 0.
            loss_Y = loss_G_Y + loss_cycle_Y + loss_idt_y
            loss_Y.backward(retain_graph=True)  # expect: GG203
            optimizer_g.step()

            # netD_x
            optimizer_d.zero_grad()
            pred_real = netD_x(real_y)
            loss_D_x_real = criterionGAN(pred_real, True)
            pred_fake = netD_x(fake_y)
            loss_D_x_fake = criterionGAN(pred_fake, False)
            loss_D_x = (loss_D_x_real + loss_D_x_fake) * 0.5
            loss_D_x.backward()  # expect: GG103
            optimizer_d.step()

            # netD_y
            optimizer_d.zero_grad()
            pred_real = netD_y(real_x)
            loss_D_y_real = criterionGAN(pred_real, True)
            pred_fake = netD_y(fake_x)
            loss_D_y_fake = criterionGAN(pred_fake, False)
            loss_D_y = (loss_D_y_real + loss_D_y_fake) * 0.5
            loss_D_y.backward()
            optimizer_d.step()
            print(epoch, i, loss_X.item(), loss_Y.item(), loss_D_x.item(), loss_D_y.item())


if __name__ == '__main__':
    train()
