# Source: https://github.com/Zhaoyi-Yan/Shift-Net_pytorch/issues/34
"""Shift-Net's ShiftNetModel with --gan_type re_avg_gan (relativistic average GAN), as the issue
"re_avg_gan is broken" reports it: backward_D keeps self.pred_fake = netD(fake_B.detach()) and
backwards loss_D, then backward_G builds its relativistic loss from that same self.pred_fake,
whose graph the discriminator's backward freed. Small conv nets stand in for the U-Net with the
shift layer and the patch discriminator; the inpainting mask is the center square."""
import torch
import torch.nn as nn


class GANLoss(nn.Module):
    def __init__(self, gan_type='re_avg_gan', target_real_label=1.0, target_fake_label=0.0):
        super(GANLoss, self).__init__()
        self.register_buffer('real_label', torch.tensor(target_real_label))
        self.register_buffer('fake_label', torch.tensor(target_fake_label))
        if gan_type == 'lsgan':
            self.loss = nn.MSELoss()
        elif gan_type in ('re_s_gan', 're_avg_gan'):
            self.loss = nn.BCEWithLogitsLoss()
        else:
            raise ValueError("GAN type [%s] not recognized." % gan_type)

    def get_target_tensor(self, input, target_is_real):
        target_tensor = self.real_label if target_is_real else self.fake_label
        return target_tensor.expand_as(input)

    def __call__(self, input, target_is_real):
        return self.loss(input, self.get_target_tensor(input, target_is_real))


class Opt:
    gan_type = 're_avg_gan'
    gan_weight = 0.2
    lambda_A = 100
    fineSize = 16


class ShiftNetModel:
    def __init__(self, opt):
        self.opt = opt
        self.netG = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())
        self.netD = nn.Sequential(nn.Conv2d(3, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
                                  nn.Conv2d(8, 1, 4, stride=1, padding=1))
        self.criterionGAN = GANLoss(gan_type=opt.gan_type)
        self.criterionL1 = nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
        s = opt.fineSize
        self.mask_global = torch.zeros(1, 1, s, s)
        self.mask_global[:, :, s // 4:3 * s // 4, s // 4:3 * s // 4] = 1

    def set_input(self, input):
        self.real_A = input * (1 - self.mask_global)
        self.real_B = input

    def forward(self):
        self.fake_B = self.netG(self.real_A)

    def backward_D(self):
        fake_B = self.fake_B
        real_B = self.real_B
        self.pred_fake = self.netD(fake_B.detach())
        self.pred_real = self.netD(real_B)
        if self.opt.gan_type == 're_avg_gan':
            self.loss_D = (self.criterionGAN(self.pred_real - torch.mean(self.pred_fake), True)
                           + self.criterionGAN(self.pred_fake - torch.mean(self.pred_real), False)) / 2.
        self.loss_D.backward()

    def backward_G(self):
        fake_B = self.fake_B
        real_B = self.real_B
        pred_fake = self.netD(fake_B)
        if self.opt.gan_type == 're_avg_gan':
            self.pred_real = self.netD(real_B)
            self.loss_G_GAN = (self.criterionGAN(self.pred_real - torch.mean(self.pred_fake), False)
                               + self.criterionGAN(self.pred_fake - torch.mean(self.pred_real), True)) / 2.
            self.loss_G_GAN *= self.opt.gan_weight
        self.loss_G_L1 = self.criterionL1(self.fake_B, self.real_B) * self.opt.lambda_A
        self.loss_G = self.loss_G_L1 + self.loss_G_GAN
        self.loss_G.backward()  # expect: GG101

    def optimize_parameters(self):
        self.forward()
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()

        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()


model = ShiftNetModel(Opt())
for i in range(2):
    model.set_input(torch.rand(2, 3, 16, 16) * 2 - 1)
    model.optimize_parameters()
    print(i, model.loss_D.item(), model.loss_G.item())
