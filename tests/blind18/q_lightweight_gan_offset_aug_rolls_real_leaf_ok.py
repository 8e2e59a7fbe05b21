# Source: https://github.com/lucidrains/lightweight-gan/issues/32
"""https://github.com/lucidrains/lightweight-gan/issues/32
lightweight-gan with `--aug-types [offset_h] --aug-prob 1`, fixed as the repository did (commit
5d12685, PR 33): `rand_offset` wrote each rolled image back into the batch,
`x[image_index] = torch.roll(...)`, and the real batch reaching it unflipped is a leaf that
requires grad (for the gradient penalty), so the write was refused. The fix rolls the images of
`x.unbind(dim=0)` and returns `torch.stack(imgs)`, a new tensor. Generator, discriminator, loader
and the amp scaler are small stand-ins written here (16x16 random images, CPU, no amp, `random`
seeded as in the bug variant)."""
import math
import random as pyrandom
from contextlib import contextmanager
from random import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import grad as torch_grad


def DiffAugment(x, types=[]):
    for p in types:
        for f in AUGMENT_FNS[p]:
            x = f(x)
    return x.contiguous()


def rand_brightness(x):
    x = x + (torch.rand(x.size(0), 1, 1, 1, dtype=x.dtype, device=x.device) - 0.5)
    return x


def rand_offset(x, ratio=1, ratio_h=1, ratio_v=1):
    w, h = x.size(2), x.size(3)

    imgs = []
    for img in x.unbind(dim=0):
        max_h = int(w * ratio * ratio_h)
        max_v = int(h * ratio * ratio_v)

        value_h = pyrandom.randint(0, max_h) * 2 - max_h
        value_v = pyrandom.randint(0, max_v) * 2 - max_v

        if abs(value_h) > 0:
            img = torch.roll(img, value_h, 2)

        if abs(value_v) > 0:
            img = torch.roll(img, value_v, 1)

        imgs.append(img)

    return torch.stack(imgs)


def rand_offset_h(x, ratio=1):
    return rand_offset(x, ratio=1, ratio_h=ratio, ratio_v=0)


def rand_offset_v(x, ratio=1):
    return rand_offset(x, ratio=1, ratio_h=0, ratio_v=ratio)


AUGMENT_FNS = {
    'color': [rand_brightness],
    'offset': [rand_offset],
    'offset_h': [rand_offset_h],
    'offset_v': [rand_offset_v],
}


@contextmanager
def null_context():
    yield


def default(val, d):
    return val if val is not None else d


def hinge_loss(real, fake):
    return (F.relu(1 + real) + F.relu(1 - fake)).mean()


def random_hflip(tensor, prob):
    if prob > random():
        return tensor
    return torch.flip(tensor, dims=(3,))


class AugWrapper(nn.Module):
    def __init__(self, D, image_size):
        super().__init__()
        self.D = D

    def forward(self, images, prob=0., types=[], detach=False, **kwargs):
        context = torch.no_grad if detach else null_context

        with context():
            if random() < prob:
                images = random_hflip(images, prob=0.5)
                images = DiffAugment(images, types=types)

        return self.D(images, **kwargs)


class Generator(nn.Module):
    def __init__(self, latent_dim, image_size):
        super().__init__()
        self.image_size = image_size
        self.net = nn.Sequential(nn.Linear(latent_dim, 3 * image_size * image_size), nn.Tanh())

    def forward(self, latents):
        return self.net(latents).view(-1, 3, self.image_size, self.image_size)


class Discriminator(nn.Module):
    """Returns (logits, 32x32-branch logits, auxiliary reconstruction loss) as the repository's D."""

    def __init__(self, image_size):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.1))
        self.to_logits = nn.Conv2d(8, 1, image_size // 2)
        self.to_shape_disc_out = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 1))
        self.decoder = nn.ConvTranspose2d(8, 3, 4, stride=2, padding=1)

    def forward(self, x, calc_aux_loss=False):
        h = self.features(x)
        out = self.to_logits(h).flatten(1)
        out_32x32 = self.to_shape_disc_out(h)
        aux_loss = None
        if calc_aux_loss:
            aux_loss = F.mse_loss(self.decoder(h), x.detach())
        return out, out_32x32, aux_loss


class LightweightGAN(nn.Module):
    def __init__(self, latent_dim=16, image_size=16, lr=2e-4):
        super().__init__()
        self.latent_dim = latent_dim
        self.image_size = image_size
        self.G = Generator(latent_dim, image_size)
        self.D = Discriminator(image_size)
        self.D_aug = AugWrapper(self.D, image_size)
        self.G_opt = torch.optim.Adam(self.G.parameters(), lr=lr, betas=(0.5, 0.9))
        self.D_opt = torch.optim.Adam(self.D.parameters(), lr=lr * 2, betas=(0.5, 0.9))


class NoScaler:
    """Stand-in for torch.cuda.amp.GradScaler(enabled=False)."""

    def scale(self, t):
        return t

    def step(self, opt):
        opt.step()

    def update(self):
        pass


class Trainer:
    def __init__(self, batch_size=4, aug_prob=1., aug_types=['offset_h'], gradient_accumulate_every=1,
                 gp_weight=10):
        self.GAN = LightweightGAN()
        self.batch_size = batch_size
        self.aug_prob = aug_prob
        self.aug_types = aug_types
        self.gradient_accumulate_every = gradient_accumulate_every
        self.gp_weight = gp_weight
        self.D_scaler, self.G_scaler = NoScaler(), NoScaler()
        self.steps = 0
        self.loader = iter([torch.rand(batch_size, 3, 16, 16) * 2 - 1 for _ in range(10)])

    def train(self):
        self.GAN.train()
        total_disc_loss = torch.zeros([])
        total_gen_loss = torch.zeros([])
        batch_size = self.batch_size
        latent_dim = self.GAN.latent_dim

        aug_prob = default(self.aug_prob, 0)
        aug_types = self.aug_types
        aug_kwargs = {'prob': aug_prob, 'types': aug_types}

        G, D, D_aug = self.GAN.G, self.GAN.D, self.GAN.D_aug
        apply_gradient_penalty = self.steps % 4 == 0

        # train discriminator
        self.GAN.D_opt.zero_grad()
        for i in range(self.gradient_accumulate_every):
            latents = torch.randn(batch_size, latent_dim)
            image_batch = next(self.loader)
            image_batch.requires_grad_()

            with torch.no_grad():
                generated_images = G(latents)

            fake_output, fake_output_32x32, _ = D_aug(generated_images, detach=True, **aug_kwargs)
            real_output, real_output_32x32, real_aux_loss = D_aug(image_batch, calc_aux_loss=True, **aug_kwargs)

            divergence = hinge_loss(real_output, fake_output)
            divergence_32x32 = hinge_loss(real_output_32x32, fake_output_32x32)
            disc_loss = divergence + divergence_32x32
            aux_loss = real_aux_loss
            disc_loss = disc_loss + aux_loss

            if apply_gradient_penalty:
                outputs = [real_output, real_output_32x32]
                gradients = torch_grad(outputs=outputs, inputs=image_batch,
                                       grad_outputs=list(map(lambda t: torch.ones(t.size()), outputs)),
                                       create_graph=True, retain_graph=True, only_inputs=True)[0]
                gradients = gradients.reshape(batch_size, -1)
                gp = self.gp_weight * ((gradients.norm(2, dim=1) - 1) ** 2).mean()
                if not torch.isnan(gp):
                    disc_loss = disc_loss + gp

            disc_loss = disc_loss / self.gradient_accumulate_every
            self.D_scaler.scale(disc_loss).backward()
            total_disc_loss += divergence.detach()

        self.d_loss = float(total_disc_loss.item() / self.gradient_accumulate_every)
        self.D_scaler.step(self.GAN.D_opt)
        self.D_scaler.update()

        # train generator
        self.GAN.G_opt.zero_grad()
        for i in range(self.gradient_accumulate_every):
            latents = torch.randn(batch_size, latent_dim)
            generated_images = G(latents)
            fake_output, fake_output_32x32, _ = D_aug(generated_images, **aug_kwargs)
            fake_output_loss = fake_output.mean(dim=1) + fake_output_32x32.mean(dim=1)
            k = math.ceil(batch_size * 0.5)
            fake_output_loss, _ = fake_output_loss.topk(k=k, largest=False)
            loss = fake_output_loss.mean()
            gen_loss = loss / self.gradient_accumulate_every
            self.G_scaler.scale(gen_loss).backward()
            total_gen_loss += loss.detach()

        self.g_loss = float(total_gen_loss.item() / self.gradient_accumulate_every)
        self.G_scaler.step(self.GAN.G_opt)
        self.G_scaler.update()
        self.steps += 1


torch.manual_seed(0)
pyrandom.seed(1)
trainer = Trainer()
for _ in range(3):
    trainer.train()
    print(trainer.steps, trainer.d_loss, trainer.g_loss)
