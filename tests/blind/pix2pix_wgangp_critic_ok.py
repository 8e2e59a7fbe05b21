# Source: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/issues/439 (comment of
# 2020-06-23: WGAN-GP for pix2pix, "I am updating D multiple times before updating G" and gets
# "Trying to backward through the graph a second time, even I only call backward once")
"""pix2pix with a WGAN-GP critic updated several times per generator update; the gradient penalty
gets fake_AB.detach() too (the fix the thread arrived at), so no critic update reaches the
generator's graph."""
import torch
import torch.nn as nn


def cal_gradient_penalty(netD, real_data, fake_data, lambda_gp=10.0):
    alpha = torch.rand(real_data.shape[0], 1, 1, 1).expand_as(real_data)
    interpolatesv = alpha * real_data + (1 - alpha) * fake_data
    interpolatesv.requires_grad_(True)
    disc_interpolates = netD(interpolatesv)
    gradients = torch.autograd.grad(outputs=disc_interpolates, inputs=interpolatesv,
                                    grad_outputs=torch.ones_like(disc_interpolates),
                                    create_graph=True, retain_graph=True)[0]
    gradients = gradients.view(real_data.size(0), -1)
    return (((gradients + 1e-16).norm(2, dim=1) - 1) ** 2).mean() * lambda_gp


class Pix2PixWGANGP:
    def __init__(self, n_critic=3):
        self.netG = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 3, padding=1), nn.Tanh())
        self.netD = nn.Sequential(nn.Conv2d(2, 4, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(4, 1, 4, 1, 0))
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=1e-4, betas=(0.0, 0.9))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=1e-4, betas=(0.0, 0.9))
        self.n_critic = n_critic

    def set_input(self, a, b):
        self.real_A, self.real_B = a, b

    def forward(self):
        self.fake_B = self.netG(self.real_A)

    def backward_D(self):
        fake_AB = torch.cat((self.real_A, self.fake_B), 1)
        pred_fake = self.netD(fake_AB.detach())
        self.loss_D_fake = pred_fake.mean()
        real_AB = torch.cat((self.real_A, self.real_B), 1)
        self.loss_D_real = -self.netD(real_AB).mean()
        self.gradient_penalty = cal_gradient_penalty(self.netD, real_AB, fake_AB.detach())
        self.loss_D = self.loss_D_fake + self.loss_D_real + self.gradient_penalty
        self.loss_D.backward()

    def backward_G(self):
        fake_AB = torch.cat((self.real_A, self.fake_B), 1)
        self.loss_G = -self.netD(fake_AB).mean() + (self.fake_B - self.real_B).abs().mean() * 100
        self.loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        for _ in range(self.n_critic):
            self.optimizer_D.zero_grad()
            self.backward_D()
            self.optimizer_D.step()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()


model = Pix2PixWGANGP()
for i in range(2):
    model.set_input(torch.randn(2, 1, 8, 8), torch.randn(2, 1, 8, 8))
    model.optimize_parameters()
