# Source: https://github.com/eriklindernoren/PyTorch-GAN/issues/6
"""PyTorch-GAN's implementations/wgan/wgan.py as the reporter ran it ("Oh, a typo had snuck in
there"): after n_critic critic steps, the generator step samples gen_imgs but scores the last
critic step's fake_imgs, gen_validity = discriminator(fake_imgs). fake_imgs was not detached, so
its generator graph was already walked and freed by fake_validity.backward(fake), and
gen_validity.backward(valid) runs into it. Small MLPs on 4x4 "images" and random batches replace
the MNIST setup; one epoch of two generator iterations is run."""
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable


class opt:
    n_epochs = 1
    batch_size = 8
    lr = 0.00005
    latent_dim = 8
    img_size = 4
    channels = 1
    n_critic = 2
    clip_value = 0.01


img_shape = (opt.channels, opt.img_size, opt.img_size)
cuda = False
Tensor = torch.FloatTensor


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()

        self.model = nn.Sequential(
            nn.Linear(opt.latent_dim, 16),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(16, 32),
            nn.BatchNorm1d(32),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(32, int(np.prod(img_shape))),
            nn.Tanh()
        )

    def forward(self, z):
        img = self.model(z)
        img = img.view(img.shape[0], *img_shape)
        return img


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()

        self.model = nn.Sequential(
            nn.Linear(int(np.prod(img_shape)), 16),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(16, 1)
        )

    def forward(self, img):
        img_flat = img.view(img.shape[0], -1)
        validity = self.model(img_flat)
        return validity


# Initialize generator and discriminator
generator = Generator()
discriminator = Discriminator()

# Optimizers
optimizer_G = torch.optim.RMSprop(generator.parameters(), lr=opt.lr)
optimizer_D = torch.optim.RMSprop(discriminator.parameters(), lr=opt.lr)

dataloader = [(torch.rand(opt.batch_size, *img_shape) * 2 - 1, None) for _ in range(4)]

batches_done = 0
for epoch in range(opt.n_epochs):

    # Batch iterator
    data_iter = iter(dataloader)

    for i in range(len(dataloader) // opt.n_critic):
        # Train discriminator for n_critic times
        for _ in range(opt.n_critic):
            (imgs, _) = next(data_iter)

            # Adversarial ground truths
            valid = Variable(Tensor(imgs.shape[0], 1).fill_(-1.0), requires_grad=False)
            fake = Variable(Tensor(imgs.shape[0], 1).fill_(1.0), requires_grad=False)

            real_imgs = Variable(imgs.type(Tensor))

            # ---------------------
            #  Train Discriminator
            # ---------------------

            optimizer_D.zero_grad()

            # Sample noise as generator input
            z = Variable(Tensor(np.random.normal(0, 1, (imgs.shape[0], opt.latent_dim))))

            # Generate a batch of images
            fake_imgs = generator(z)

            # Train on real images
            real_validity = discriminator(real_imgs)
            real_validity.backward(valid)
            # Train on fake images
            fake_validity = discriminator(fake_imgs)
            fake_validity.backward(fake)

            d_loss = real_validity - fake_validity

            optimizer_D.step()

            # Clip weights of discriminator
            for p in discriminator.parameters():
                p.data.clamp_(-opt.clip_value, opt.clip_value)

        # -----------------
        #  Train Generator
        # -----------------

        optimizer_G.zero_grad()

        # Sample noise as generator input
        z = Variable(Tensor(np.random.normal(0, 1, (imgs.shape[0], opt.latent_dim))))

        # Generate a batch of images
        gen_imgs = generator(z)

        # Loss measures generator's ability to fool the discriminator
        # Train on fake images
        gen_validity = discriminator(fake_imgs)
        gen_validity.backward(valid)  # expect: GG101

        optimizer_G.step()

        print("[Epoch %d/%d] [Batch %d/%d] [D loss: %f] [G loss: %f]" % (epoch, opt.n_epochs,
                                                        batches_done % len(dataloader), len(dataloader),
                                                        d_loss.mean().item(), gen_validity.mean().item()))
        batches_done += 1
