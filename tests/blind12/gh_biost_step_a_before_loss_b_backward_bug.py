# Source: https://github.com/tomercohen11/BiOST/issues/4
"""BiOST (one-shot translation, two encoder/decoder pairs): optimize_parameters() backwards
loss_G_A with retain_graph=True, steps optimizer_a (Enc_a/Dec_a), then backwards loss_G_B, whose
pixel cycle B->A->B runs through netEnc_a(fake_BA) = netEnc_a(netDec_a(enc_b)). The step changed
those weights in place, so the second backward raises "one of the variables needed for gradient
computation has been modified by an inplace operation" (the report's anomaly trace points at
ConvolutionBackward0 in `enc_ba = self.netEnc_a(fake_BA)`). The thread has no answer.
BaseModel, networks.define_ED (small conv encoders/decoders), the options and the data loader
are stand-ins written here; BiOSTModel keeps the repository's losses and update order.
"""
from collections import OrderedDict
from itertools import chain
from types import SimpleNamespace

import torch
import torch.nn as nn
from torch.autograd import Variable


class ResBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.block = nn.Sequential(nn.Conv2d(dim, dim, 3, padding=1), nn.InstanceNorm2d(dim), nn.ReLU(True),
                                   nn.Conv2d(dim, dim, 3, padding=1), nn.InstanceNorm2d(dim))

    def forward(self, x):
        return x + self.block(x)


def define_ED(input_nc, output_nc, ngf, n_blocks_encoder=1, n_blocks_decoder=1, n_downsampling=1):
    """Stand-in for networks.define_ED: a conv encoder with res blocks and a mirrored decoder."""
    enc = [nn.Conv2d(input_nc, ngf, 7, padding=3), nn.InstanceNorm2d(ngf), nn.ReLU(True)]
    dim = ngf
    for _ in range(n_downsampling):
        enc += [nn.Conv2d(dim, dim * 2, 3, stride=2, padding=1), nn.InstanceNorm2d(dim * 2), nn.ReLU(True)]
        dim *= 2
    enc += [ResBlock(dim) for _ in range(n_blocks_encoder)]
    dec = [ResBlock(dim) for _ in range(n_blocks_decoder)]
    for _ in range(n_downsampling):
        dec += [nn.ConvTranspose2d(dim, dim // 2, 3, stride=2, padding=1, output_padding=1),
                nn.InstanceNorm2d(dim // 2), nn.ReLU(True)]
        dim //= 2
    dec += [nn.Conv2d(dim, output_nc, 7, padding=3), nn.Tanh()]
    return nn.Sequential(*enc), nn.Sequential(*dec)


class BaseModel:
    def initialize(self, opt):
        self.opt = opt
        self.isTrain = opt.isTrain


class BiOSTModel(BaseModel):
    def name(self):
        return 'BiOSTModel'

    def compute_kl(self, mu):
        mu_2 = torch.pow(mu, 2)
        encoding_loss = torch.mean(mu_2)
        return encoding_loss

    def set_encoders_and_decoders(self, opt):
        self.netEnc_a, self.netDec_a = define_ED(opt.input_nc, opt.output_nc, opt.ngf,
                                                 n_blocks_encoder=opt.n_res_blocks,
                                                 n_blocks_decoder=opt.n_res_blocks,
                                                 n_downsampling=opt.n_downsampling)
        self.netEnc_b, self.netDec_b = define_ED(opt.input_nc, opt.output_nc, opt.ngf,
                                                 n_blocks_encoder=opt.n_res_blocks,
                                                 n_blocks_decoder=opt.n_res_blocks,
                                                 n_downsampling=opt.n_downsampling)

    def initialize(self, opt):
        BaseModel.initialize(self, opt)
        self.set_encoders_and_decoders(opt)
        if self.isTrain:
            self.criterionIdt = torch.nn.L1Loss()
            self.mse = torch.nn.MSELoss()
            self.optimizer_a = torch.optim.Adam(chain(self.netEnc_a.parameters(), self.netDec_a.parameters()),
                                                lr=opt.lr, betas=(opt.beta1, 0.999))
            self.optimizer_b = torch.optim.Adam(chain(self.netEnc_b.parameters(), self.netDec_b.parameters()),
                                                lr=opt.lr, betas=(opt.beta1, 0.999))
            self.optimizers = []
            self.optimizers.append(self.optimizer_a)
            self.optimizers.append(self.optimizer_b)

    def set_input(self, input):
        AtoB = self.opt.which_direction == 'AtoB'
        self.input_A = input['A' if AtoB else 'B']
        self.input_B = input['B' if AtoB else 'A']

    def forward(self):
        self.real_A = Variable(self.input_A)
        self.real_B = Variable(self.input_B)

    def backward_G(self):
        enc_a = self.netEnc_a(self.real_A)
        enc_b = self.netEnc_b(self.real_B)

        fake_AA = self.netDec_a(enc_a)
        fake_AB = self.netDec_b(enc_a)
        fake_BA = self.netDec_a(enc_b)
        fake_BB = self.netDec_b(enc_b)
        enc_ab = self.netEnc_b(fake_AB)
        fake_ABA = self.netDec_a(enc_ab)

        enc_ba = self.netEnc_a(fake_BA)
        fake_BAB = self.netDec_b(enc_ba)

        # Reconstruction losses
        loss_idt_A = self.opt.idt_w * self.criterionIdt(fake_AA, self.real_A)
        loss_idt_B = self.opt.idt_w * self.criterionIdt(fake_BB, self.real_B)

        # Pixel cycle losses
        loss_cycle_A = self.opt.lambda_A * self.criterionIdt(fake_ABA, self.real_A)
        loss_cycle_B = self.opt.lambda_B * self.criterionIdt(fake_BAB, self.real_B)

        # (Pseudo) KL losses
        loss_kl_B = self.opt.kl_lambda * self.compute_kl(enc_b)
        loss_kl_A = self.opt.kl_lambda * self.compute_kl(enc_a)

        # Feature cycle loss
        loss_feat_BA = self.opt.feat_weight * self.mse(enc_ba, enc_b.detach())

        loss_G_A = loss_cycle_A + loss_idt_A + loss_kl_A + loss_feat_BA
        loss_G_B = loss_cycle_B + loss_idt_B + loss_kl_B

        self.fake_AB = fake_AB.data
        self.fake_BA = fake_BA.data

        self.loss_cycle_A = loss_cycle_A.item()
        self.loss_cycle_B = loss_cycle_B.item()
        self.loss_idt_A = loss_idt_A.item()
        self.loss_idt_B = loss_idt_B.item()
        self.loss_kl_B = loss_kl_B.item()

        return loss_G_A, loss_G_B

    def optimize_parameters(self):
        # forward
        self.forward()
        loss_G_A, loss_G_B = self.backward_G()

        # x loss updates
        self.optimizer_a.zero_grad()
        loss_G_A.backward(retain_graph=True)
        self.optimizer_a.step()

        # B loss updates
        self.optimizer_b.zero_grad()
        loss_G_B.backward()  # expect: GG103
        self.optimizer_b.step()

    def get_current_errors(self):
        return OrderedDict([('Idt_B', self.loss_idt_B), ('Idt_A', self.loss_idt_A),
                            ('Cycle_A', self.loss_cycle_A), ('Cycle_B', self.loss_cycle_B),
                            ('Kl_B', self.loss_kl_B)])


opt = SimpleNamespace(isTrain=True, input_nc=3, output_nc=3, ngf=4, n_res_blocks=1, n_downsampling=1,
                      lr=2e-4, beta1=0.5, which_direction='AtoB', idt_w=1.0, lambda_A=10.0,
                      lambda_B=10.0, kl_lambda=0.1, feat_weight=1.0)
model = BiOSTModel()
model.initialize(opt)
dataset = [{'A': torch.randn(1, 3, 16, 16), 'B': torch.randn(1, 3, 16, 16)} for _ in range(2)]
for epoch in range(1):
    for i, data in enumerate(dataset):
        model.set_input(data)
        model.optimize_parameters()
        errors = model.get_current_errors()
