# Source: https://github.com/PeizhuoLi/ganimator/issues/5
"""Fixed twin of q_ganimator_joint_train_stepped_stage_bug.py. GANimator with `--skeleton_aware=0`:
`joint_train` let each jointly trained stage backward its generator loss and step its generator
in turn, so the next stage's backward walked the previous stage's plain `nn.Conv1d` weights after
their in-place update and raised the in-place modification error. The thread has no fix; the right
one, applied here, keeps the discriminator phase as it was and, for the generator and
reconstruction phases, zeroes every stage's generator gradients, takes every stage's backward
(gradients flow into the earlier stages, as joint training intends), then steps every generator
optimizer. The skeleton, motion data, losses and the image pool are small stand-ins.
"""
import functools
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

# ----------------------------- models/utils.py (stand-ins) -----------------------------


class GAN_loss(nn.Module):
    def __init__(self, gan_mode):
        super().__init__()
        self.loss = nn.MSELoss()

    def forward(self, pred, target_is_real):
        target = torch.ones_like(pred) if target_is_real else torch.zeros_like(pred)
        return self.loss(pred, target)


class ImagePool:
    def __init__(self, pool_size):
        self.pool_size = pool_size

    def query(self, images):
        return images


class RecLoss(nn.Module):
    def forward(self, a, b):
        return F.mse_loss(a, b)


def get_interpolator(args):
    return lambda img, size: F.interpolate(img, size=size, mode='linear', align_corners=False)

# ----------------------------- models/gan1d.py -----------------------------


class Conv1dModel(nn.Module):
    def __init__(self, channels, kernel_size, padding=-1, last_active=None, padding_mode='zeros', batch_norm=False,
                 skeleton_aware=False, neighbour_list=None, activation='LeakyReLU'):
        super(Conv1dModel, self).__init__()
        conv1d = nn.Conv1d  # skeleton_aware=0
        if padding == -1:
            padding = (kernel_size - 1) // 2
        self.layers = nn.ModuleList()
        for i in range(len(channels) - 1):
            in_c = channels[i]
            out_c = channels[i + 1]
            bias = not batch_norm
            if i == len(channels) - 2:
                bias = True
            seq = [conv1d(in_channels=in_c, out_channels=out_c, kernel_size=kernel_size,
                          padding=padding, padding_mode=padding_mode, bias=bias)]
            if i < len(channels) - 2:
                if activation == 'LeakyReLU':
                    seq.append(nn.LeakyReLU(negative_slope=0.2, inplace=True))
                else:
                    seq.append(nn.ReLU(inplace=True))
            else:
                if last_active is not None:
                    seq.append(last_active)
            self.layers.append(nn.Sequential(*seq))
        self.output = None

    def forward(self, input, prev_img=None, cond=None, cond_requires_mask=False):
        for layer in self.layers:
            input = layer(input)
        self.output = input
        return input


class GAN_model:
    def __init__(self, gen: nn.Module, disc: nn.Module, args):
        self.gen = gen
        self.disc = disc
        self.optimizerG = torch.optim.Adam(gen.parameters(), lr=args.lr_g)
        self.optimizerD = torch.optim.Adam(disc.parameters(), lr=args.lr_d)
        self.fake_pool = ImagePool(50)
        self.criterion_gan = GAN_loss(args.gan_mode)
        self.criterion_rec = RecLoss()
        self.gan_mode = args.gan_mode
        self.fake_res = None
        self.loss_D = torch.tensor(0.)
        self.loss_G = torch.tensor(0.)
        self.loss_rec = torch.tensor(0.)
        self.loss_consistency = torch.tensor(0.)
        self.loss_G_total = torch.tensor(0.)
        self.loss_names = ['loss_D', 'loss_G', 'loss_rec', 'loss_consistency', 'loss_G_total']
        self.args = args

    def disc_requires_grad_(self, requires_grad):
        for para in self.disc.parameters():
            para.requires_grad = requires_grad

    def backward_D_basic(self, netD, real, fake):
        pred_real = netD(real)
        loss_D_real = self.criterion_gan(pred_real, True)
        pred_fake = netD(fake.detach())
        loss_D_fake = self.criterion_gan(pred_fake, False)
        loss_D = (loss_D_real + loss_D_fake) * 0.5
        loss_D.backward()
        return loss_D

    def backward_D(self):
        fake = self.fake_pool.query(self.fake_res.detach())
        self.loss_D = self.backward_D_basic(self.disc, self.real_res, fake)

    def backward_G(self):
        pred_fake = self.disc(self.fake_res)
        self.loss_G = self.criterion_gan(pred_fake, True)
        self.loss_consistency = torch.tensor(0.)
        loss_total = self.loss_G + \
                     self.loss_consistency * self.args.lambda_consistency
        self.loss_G_total = loss_total
        loss_total.backward(retain_graph=True)

    def forward_proxy(self, real, img_base=0):
        assert real.shape[-1] == img_base.shape[-1]
        self.delta = self.gen.output
        self.real_res = real
        self.fake_res = self.delta + img_base

    def optimize_parameters(self, gen=True, disc=True, rec=False):
        if gen:
            self.disc_requires_grad_(False)
            self.optimizerG.zero_grad()
            self.backward_G()
            self.optimizerG.step()

        if disc:
            self.disc_requires_grad_(True)
            self.optimizerD.zero_grad()
            self.backward_D()
            self.optimizerD.step()

        if rec:
            self.optimizerG.zero_grad()
            self.loss_rec = self.criterion_rec(self.fake_res, self.real_res)
            loss_rec_back = self.loss_rec * self.args.lambda_rec
            loss_rec_back.backward(retain_graph=True)
            self.optimizerG.step()

# ----------------------------- models/architecture.py -----------------------------


def draw_example(gens, mode, z_star, lengths, amps, batch_size, args, all_img=False, conds=None, full_noise=False):
    interpolater = get_interpolator(args)
    imgs = []
    prev_img = torch.zeros((batch_size, z_star.shape[1], lengths[0]))
    for step, (gen, length, amp) in enumerate(zip(gens, lengths, amps)):
        if mode == 'random':
            n_channel = z_star.shape[1] if full_noise else 1
            noise = torch.randn((batch_size, n_channel, length)) * amp
            if noise.shape[1] == 1:
                noise = noise.repeat(1, z_star.shape[1], 1)
        else:
            noise = z_star if step == 0 else 0
        prev_img = gen(noise + prev_img, prev_img) + prev_img
        imgs.append(prev_img)
        if len(lengths) >= step + 2:
            prev_img = interpolater(prev_img, size=lengths[step + 1])
    return prev_img if not all_img else imgs


def joint_train(all_reals, gens, gan_models, all_lengths, all_z_star, all_amps, args, loss_recorder):
    interpolator = get_interpolator(args)
    for iters in range(args.num_iters):
        for i in range(args.D_fact + args.G_fact + 1):
            for m in range(len(all_reals)):
                reals = all_reals[m]
                z_star = all_z_star[m]
                amps = all_amps[m]
                lengths = all_lengths[m]
                mode = 'random' if i < args.D_fact + args.G_fact else 'rec'
                imgs = draw_example(gens, mode, z_star, lengths, amps, batch_size=1, args=args, all_img=True,
                                    full_noise=args.full_noise, conds=reals)
                imgs.append(torch.zeros_like(reals[0]))  # Trick for get the base image for stage_id = 0

                for j in range(len(gan_models)):
                    stage_id = j + len(gens) - len(gan_models)
                    gan_models[j].forward_proxy(reals[stage_id], interpolator(imgs[stage_id - 1], lengths[stage_id]))

                if i < args.D_fact:
                    optimize_lambda = lambda x: x.optimize_parameters(gen=False, disc=True, rec=False)
                    list(map(optimize_lambda, gan_models))
                else:
                    # every stage's generator backward before any generator step
                    for gan_model in gan_models:
                        gan_model.optimizerG.zero_grad()
                    for gan_model in gan_models:
                        if i < args.D_fact + args.G_fact:
                            gan_model.disc_requires_grad_(False)
                            gan_model.backward_G()
                        else:
                            gan_model.loss_rec = gan_model.criterion_rec(gan_model.fake_res, gan_model.real_res)
                            (gan_model.loss_rec * args.lambda_rec).backward(retain_graph=True)
                    for gan_model in gan_models:
                        gan_model.optimizerG.step()

        for j, gan_model in enumerate(gan_models):
            stage_id = j + len(gens) - len(gan_models)
            for loss_name in gan_model.loss_names:
                loss_recorder[f'{stage_id:02d}/{loss_name}'] = float(getattr(gan_model, loss_name))

# ----------------------------- train.py -----------------------------


def main():
    args = SimpleNamespace(num_iters=2, D_fact=1, G_fact=1, lr_g=1e-4, lr_d=1e-4, gan_mode='lsgan',
                           lambda_consistency=5., lambda_rec=50., full_noise=False, skeleton_aware=0,
                           group_size=2, num_stages=2)
    torch.manual_seed(0)
    n_channels = 12
    lengths = [8, 12]
    motion = torch.randn(1, n_channels, lengths[-1])
    reals = [F.interpolate(motion, size=length, mode='linear', align_corners=False) for length in lengths]
    z_star = torch.randn(1, n_channels, lengths[0])
    amps = [0.1, 0.05]

    gens, gan_models = [], []
    for stage in range(args.num_stages):
        gen = Conv1dModel([n_channels, 16, 16, n_channels], kernel_size=3, skeleton_aware=args.skeleton_aware)
        disc = Conv1dModel([n_channels, 16, 1], kernel_size=3, skeleton_aware=args.skeleton_aware)
        gens.append(gen)
        gan_models.append(GAN_model(gen, disc, args))

    curr_stage = args.group_size
    group_gan_models = gan_models[:curr_stage]
    loss_recorder = {}
    joint_train([reals], gens[:curr_stage], group_gan_models, [lengths], [z_star], [amps], args, loss_recorder)
    print(loss_recorder)


main()
