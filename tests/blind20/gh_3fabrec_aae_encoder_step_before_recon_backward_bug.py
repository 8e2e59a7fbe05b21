# Source: https://github.com/browatbn2/3FabRec/issues/3
"""3FabRec adversarial autoencoder training (train_aae_unsupervised.py + aae_training.py).

Each batch encodes the images (`z_sample = saae.Q(images)`), then `update_encoding` trains the
latent discriminator D_z and applies an encoder "gaussian" loss: `loss_E.backward(retain_graph=True)`
followed by `self.optimizer_E.step()`.  That step rewrites the encoder weights in place, but the
encoder graph that produced `z_sample` is still needed: the batch goes on to decode
`X_recon = saae.P(z_sample)` and calls `loss.backward()` on reconstruction + GAN losses, which
backpropagates into Q and needs its (now modified) weights.  With torch >= 1.5 this raises "one of
the variables needed for gradient computation has been modified by an inplace operation:
[torch.FloatTensor [512, 99]], which is output 0 of TBackward" (Q's last Linear weight).

Fix (the maintainer's commit d67ca0e, "fix pytorch1.5+ bug by removing separate encoder update step
in update_encoding()"): drop `self.optimizer_E.step()` from `update_encoding`; the encoder is
stepped once after `loss.backward()`, with the gradients of both losses.
"""
import argparse
import random

import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
random.seed(0)

eps = 1e-8
device = torch.device("cpu")
WITH_LOSS_ZREG = False
Z_DIM = 12


def set_requires_grad(net, requires_grad):
    for p in net.parameters():
        p.requires_grad = requires_grad


def shuffle(ids):
    ids = list(ids)
    random.shuffle(ids)
    return ids


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.LeakyReLU(0.2),
                                      nn.Conv2d(8, 16, 3, 2, 1), nn.LeakyReLU(0.2), nn.Flatten())
        self.fc = nn.Linear(16 * 4 * 4, Z_DIM)

    def forward(self, x):
        return self.fc(self.features(x))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(Z_DIM, 16 * 4 * 4)
        self.up = nn.Sequential(nn.ConvTranspose2d(16, 8, 4, 2, 1), nn.ReLU(),
                                nn.ConvTranspose2d(8, 3, 4, 2, 1), nn.Tanh())

    def forward(self, z):
        return self.up(self.fc(z).view(-1, 16, 4, 4))


class DiscriminatorZ(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(Z_DIM, 32), nn.ReLU(), nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(8, 1, 8), nn.Flatten(), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


class SAAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.Q = Encoder()
        self.P = Decoder()
        self.D_z = DiscriminatorZ()
        self.D = Discriminator()
        self.total_iter = 0


def loss_recon(X, X_recon):
    return torch.abs(X - X_recon).mean()


class AAETraining(object):
    def __init__(self, args):
        self.args = args
        self.saae = SAAE()
        betas = (0.0, 0.999)
        Q_params = list(self.saae.Q.parameters())
        self.optimizer_E = optim.Adam(Q_params, lr=args.lr, betas=betas)
        self.optimizer_G = optim.Adam(self.saae.P.parameters(), lr=args.lr, betas=betas)
        self.optimizer_D_z = optim.Adam(self.saae.D_z.parameters(), lr=args.lr, betas=betas)
        self.optimizer_D = optim.Adam(self.saae.D.parameters(), lr=args.lr * 0.5, betas=betas)
        self.epoch = 0
        self.total_iter = 0
        self.iter_in_epoch = 0

    def enc_rand_like(self, z):
        return torch.randn_like(z)

    def update_encoding(self, z_sample):
        stats = {}
        # Discriminator
        if self.iter_in_epoch % 4 == 0:
            z_real = self.enc_rand_like(z_sample).to(device)
            D_real = self.saae.D_z(z_real)
            D_fake = self.saae.D_z(z_sample.detach())
            loss_D_z = -torch.mean(torch.log(D_real + eps) + torch.log(1 - D_fake + eps))
            loss_D_z.backward()
            self.optimizer_D_z.step()
            stats['loss_D_z'] = loss_D_z.item()

        # Encoder gaussian loss
        if self.iter_in_epoch % 2 == 0:
            D_fake = self.saae.D_z(z_sample)
            loss_E = -torch.mean(torch.log(D_fake + eps))
            loss_E.backward(retain_graph=True)
            self.optimizer_E.step()
            stats['loss_E'] = loss_E.item()

        return stats

    def update_gan(self, X_target, X_recon, z_sample, train=True):
        stats = {}
        # update discriminator
        if self.iter_in_epoch % self.args.update_D_freq == 0:
            self.saae.D.zero_grad()
            err_real = self.saae.D(X_target)
            err_fake = self.saae.D(X_recon.detach())
            err_fake = err_fake[shuffle(range(len(err_fake)))]
            loss_D = -torch.mean(torch.log(err_real + eps) + torch.log(1.0 - err_fake + eps))
            if train:
                loss_D.backward()
                self.optimizer_D.step()
            stats.update({'loss_D': loss_D.item(), 'err_real': err_real.mean().item()})

        # update E
        self.saae.D.zero_grad()
        set_requires_grad(self.saae.D, False)
        err_G_random = self.saae.D(X_recon)
        loss_G = -torch.mean(torch.log(err_G_random + eps))
        set_requires_grad(self.saae.D, True)
        stats.update({'loss_G': loss_G.item()})
        return stats, loss_G


class AAEUnsupervisedTraining(AAETraining):
    def train(self, num_epochs):
        for _ in range(num_epochs):
            self.epoch_stats = []
            self._run_epoch(self.dataset)
            print("epoch", self.epoch, "loss", self.epoch_stats[-1]['loss'])
            self.epoch += 1

    def _run_epoch(self, dataset, eval=False):
        self.iter_in_epoch = 0
        for data in dataset:
            self._run_batch(data, eval=eval)
            self.total_iter += 1
            self.saae.total_iter = self.total_iter
            self.iter_in_epoch += 1

    def _run_batch(self, data, eval=False):
        iter_stats = {}
        X_target = data

        self.saae.zero_grad()
        loss = torch.zeros(1, requires_grad=True).to(device)

        # Encoding
        with torch.set_grad_enabled(self.args.train_encoder):
            z_sample = self.saae.Q(data)
            if not eval and self.args.with_zgan and self.args.train_encoder:
                if WITH_LOSS_ZREG:
                    loss_zreg = torch.abs(z_sample).mean()
                    loss += loss_zreg
                encoding = self.update_encoding(z_sample)
                iter_stats.update(encoding)

        iter_stats['z_recon_mean'] = z_sample.mean().item()

        # Decoding
        if not self.args.train_encoder:
            z_sample = z_sample.detach()

        with torch.set_grad_enabled(self.args.train_decoder):
            X_recon = self.saae.P(z_sample)
            loss_rec = loss_recon(X_target, X_recon)
            loss = loss_rec * self.args.w_rec
            iter_stats['loss_recon'] = loss_rec.item()

            if self.args.with_gan and self.args.train_decoder:
                gan_stats, loss_G = self.update_gan(X_target, X_recon, z_sample, train=not eval)
                loss += loss_G
                iter_stats.update(gan_stats)

            iter_stats['loss'] = loss.item()

            if self.args.train_decoder:
                loss.backward()  # expect: GG103

            # Update auto-encoder
            if not eval:
                if self.args.train_encoder:
                    self.optimizer_E.step()
                if self.args.train_decoder:
                    self.optimizer_G.step()

        self.epoch_stats.append(iter_stats)


if __name__ == "__main__":
    args = argparse.Namespace(lr=2e-4, w_rec=1.0, with_gan=True, with_zgan=True, train_encoder=True,
                              train_decoder=True, update_D_freq=2)
    fntr = AAEUnsupervisedTraining(args)
    fntr.dataset = [torch.rand(4, 3, 16, 16) * 2 - 1 for _ in range(4)]
    fntr.train(num_epochs=2)
