# Source: https://github.com/xwshen51/DEAR/issues/2
"""Fixed twin of q_dear_scm_prior_step_after_encoder_bug.py. DEAR with the linear SCM prior: each
g-step draws z through the SCM prior into the decoder, backwards the encoder loss and steps; in the
bug it also calls `prior_optimizer.step()` there, which rewrites the prior's `p` in place before
`loss_decoder.backward()` walks `self.p[0] * eps` (GG103 on the second batch). The maintainer's
answer was to install torch 1.4; the right fix, applied here: the encoder loss does not depend on the
prior, so the prior is stepped only after the decoder backward that gives it its gradient (the
encoder-side `prior_optimizer.step()` only replayed stale Adam momentum). `zero_grad(set_to_none=False)`
keeps the reporter's torch 1.x behaviour. The nets are small stand-ins, the CelebA loader is random
data, and DataParallel is a one-device stand-in.
"""
import argparse
import random

import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F

# ----------------------------- causal_model.py -----------------------------


class InvertiblePriorLinear(nn.Module):
    """docstring for InvertiblePrior"""
    def __init__(self):
        super(InvertiblePriorLinear, self).__init__()
        self.p = nn.Parameter(torch.rand([2]))

    def forward(self, eps):
        o = self.p[0] * eps + self.p[1]
        return o

    def inverse(self, o):
        eps = (o - self.p[1])/self.p[0]
        return eps


class InvertiblePriorInv(nn.Module):
    """docstring for InvertiblePrior"""
    def __init__(self, prior):
        super(InvertiblePriorInv, self).__init__()
        self.prior = prior

    def forward(self, o):
        return self.prior.inverse(o)

    def inverse(self, eps):
        return self.prior(eps)


class SCM(nn.Module):
    def __init__(self, d, A=None, scm_type='mlp'):
        super().__init__()
        self.d = d
        self.A_given = A
        self.A_fix_idx = A == 0
        self.A = nn.Parameter(torch.zeros(d, d))

        if scm_type == 'linscm':
            prior_net_model = lambda: InvertiblePriorLinear()
            prior_net_enc_model = lambda x: InvertiblePriorInv(x)
        else:
            raise NotImplementedError("Not supported prior network.")

        for i in range(d):
            setattr(self, "prior_net%d" % i, prior_net_model())
            setattr(self, "enc_net%d" % i, prior_net_enc_model(getattr(self, "prior_net%d" % i)))

    def set_zero_grad(self):
        if self.A_given is None:
            pass
        else:
            for i in range(self.d):
                for j in range(self.d):
                    if self.A_fix_idx[i, j]:
                        self.A.grad.data[i, j].zero_()

    def prior_nlr(self, z):
        '''Nonlinear transformation f_2(z)'''
        zs = torch.split(z, 1, dim=1)
        z_new = []
        for i in range(self.d):
            z_new.append(getattr(self, "prior_net%d" % i)(zs[i]))
        return torch.cat(z_new, dim=1)

    def inv_cal(self, eps):  # (I-A)^{-1}*eps
        adj_normalized = torch.inverse(torch.eye(self.A.shape[0], device=self.A.device) - self.A)
        z_pre = torch.matmul(eps, adj_normalized)
        return z_pre

    def forward(self, eps=None, z=None):
        z = self.inv_cal(eps)
        return self.prior_nlr(z)

# ----------------------------- bgm.py (stand-in nets) -----------------------------


class ResEncoder(nn.Module):
    """Small stand-in for the ResNet encoder with a Gaussian head."""
    def __init__(self, latent_dim=64, image_size=16):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 16, 4, 2, 1), nn.LeakyReLU(0.2))
        self.fc = nn.Linear(16 * (image_size // 4) ** 2, 2 * latent_dim)

    def forward(self, x):
        h = self.fc(self.conv(x).flatten(1))
        z_mu, z_logvar = h.chunk(2, dim=1)
        return z_mu, z_logvar


class BigDecoder(nn.Module):
    """Small stand-in for the SAGAN generator."""
    def __init__(self, latent_dim=64, image_size=16):
        super().__init__()
        self.s = image_size // 4
        self.fc = nn.Linear(latent_dim, 16 * self.s * self.s)
        self.deconv = nn.Sequential(nn.ReLU(), nn.ConvTranspose2d(16, 8, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(8, 3, 4, 2, 1), nn.Tanh())

    def forward(self, z):
        return self.deconv(self.fc(z).view(-1, 16, self.s, self.s))


class Discriminator(nn.Module):
    def __init__(self, image_size=16, feat=16):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.1), nn.Conv2d(8, feat, 4, 2, 1), nn.LeakyReLU(0.1))
        self.out = nn.Linear(feat * (image_size // 4) ** 2, 1)

    def forward(self, x):
        f = self.conv(x).flatten(1)
        return self.out(f), f


class Discriminator_MLP(nn.Module):
    def __init__(self, in_dim, fc_size):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, fc_size), nn.LeakyReLU(0.2))
        self.out = nn.Linear(fc_size, 1)

    def forward(self, z):
        f = self.net(z)
        return self.out(f), f


def reparameterize(mu, sigma, std=1):
    assert mu.shape == sigma.shape
    eps = mu.new(mu.shape).normal_(0, std)
    return mu + sigma * eps


class BGM(nn.Module):
    def __init__(self, latent_dim=64, image_size=16, enc_dist='gaussian', prior='gaussian', num_label=None, A=None):
        super().__init__()
        self.latent_dim = latent_dim
        self.enc_dist = enc_dist
        self.prior_dist = prior
        self.num_label = num_label
        self.encoder = ResEncoder(latent_dim, image_size)
        self.decoder = BigDecoder(latent_dim, image_size)
        if 'scm' in prior:
            self.prior = SCM(num_label, A, scm_type=prior)

    def forward(self, x=None, z=None, recon=False, infer_mean=True):
        if x is not None and z is not None:
            if self.enc_dist == 'gaussian':
                z_mu, z_logvar = self.encoder(x)
                z_fake = reparameterize(z_mu, (z_logvar / 2).exp())
            else:
                z_fake = self.encoder(x)

            if 'scm' in self.prior_dist:
                # in prior
                label_z = self.prior(z[:, :self.num_label])  # z after causal layer
                other_z = z[:, self.num_label:]
                z = torch.cat([label_z, other_z], dim=1)

            x_fake = self.decoder(z)

            if 'scm' in self.prior_dist:
                if self.enc_dist == 'gaussian' and infer_mean:
                    return z_fake, x_fake, z, z_mu
                else:
                    return z_fake, x_fake, z, None
            return z_fake, x_fake, z_mu


class BigJointDiscriminator(nn.Module):
    def __init__(self, latent_dim=64, image_size=16, fc_size=32):
        super().__init__()
        self.discriminator = Discriminator(image_size)
        self.discriminator_z = Discriminator_MLP(latent_dim, fc_size)
        self.discriminator_j = Discriminator_MLP(16 * (image_size // 4) ** 2 + fc_size, fc_size)

    def forward(self, x, z):
        sx, feature_x = self.discriminator(x)
        sz, feature_z = self.discriminator_z(z)
        sxz, _ = self.discriminator_j(torch.cat((feature_x, feature_z), dim=1))
        return (sx + sz + sxz) / 3


class DataParallel(nn.Module):
    """One-device stand-in for nn.DataParallel."""
    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

# ----------------------------- train.py -----------------------------


def get_config():
    return argparse.Namespace(dataset='celeba', labels='smile', prior='linscm', sup_type='ce', sup_coef=1.0,
                              latent_dim=10, image_size=16, enc_dist='gaussian', lr_a=1e-3, lr_p=5e-5, lr_e=5e-5,
                              lr_g=5e-5, lr_d=1e-4, beta1=0.0, beta2=0.999, d_steps_per_iter=1, g_steps_per_iter=1,
                              seed=1, n_epochs=1, start_epoch=1, print_every=1, batch_size=4)


def main():
    global args
    args = get_config()
    label_idx = [31, 20, 19, 21, 23, 13]
    num_label = len(label_idx)

    global device
    device = torch.device('cpu')
    global celoss
    celoss = torch.nn.BCEWithLogitsLoss()

    random.seed(args.seed)
    torch.manual_seed(args.seed)

    # CelebA stand-in: images and 40 binary attributes
    train_loader = [(torch.randn(args.batch_size, 3, args.image_size, args.image_size),
                     torch.randint(0, 2, (args.batch_size, 40))) for _ in range(3)]

    A = torch.zeros((num_label, num_label))
    A[0, 2:6] = 1
    A[1, 4] = 1

    model = BGM(args.latent_dim, args.image_size, args.enc_dist, args.prior, num_label, A)
    discriminator = BigJointDiscriminator(args.latent_dim, args.image_size)

    enc_param = model.encoder.parameters()
    dec_param = list(model.decoder.parameters())
    prior_param = list(model.prior.parameters())
    A_optimizer = optim.Adam(prior_param[0:1], lr=args.lr_a)
    prior_optimizer = optim.Adam(prior_param[1:], lr=args.lr_p, betas=(args.beta1, args.beta2))
    encoder_optimizer = optim.Adam(enc_param, lr=args.lr_e, betas=(args.beta1, args.beta2))
    decoder_optimizer = optim.Adam(dec_param, lr=args.lr_g, betas=(args.beta1, args.beta2))
    D_optimizer = optim.Adam(discriminator.parameters(), lr=args.lr_d, betas=(args.beta1, args.beta2))

    model = DataParallel(model.to(device))
    discriminator = DataParallel(discriminator.to(device))

    for i in range(args.start_epoch, args.start_epoch + args.n_epochs):
        train(i, model, discriminator, encoder_optimizer, decoder_optimizer, D_optimizer, train_loader, label_idx,
              args.print_every, prior_optimizer, A_optimizer)


def train(epoch, model, discriminator, encoder_optimizer, decoder_optimizer, D_optimizer,
          train_loader, label_idx, print_every, prior_optimizer, A_optimizer):
    model.train()
    discriminator.train()

    for batch_idx, (x, label) in enumerate(train_loader):
        x = x.to(device)
        sup_flag = label[:, 0] != -1
        if sup_flag.sum() > 0:
            label = label[sup_flag, :][:, label_idx].float()
        num_labels = len(label_idx)
        label = label.to(device)

        # ================== TRAIN DISCRIMINATOR ================== #
        for _ in range(args.d_steps_per_iter):
            discriminator.zero_grad(set_to_none=False)  # torch 1.x zero_grad()
            z = torch.randn(x.size(0), args.latent_dim, device=x.device)
            z_fake, x_fake, z, _ = model(x, z)

            encoder_score = discriminator(x, z_fake.detach())
            decoder_score = discriminator(x_fake.detach(), z.detach())
            del z_fake
            del x_fake

            loss_d = F.softplus(decoder_score).mean() + F.softplus(-encoder_score).mean()
            loss_d.backward()
            D_optimizer.step()

        for _ in range(args.g_steps_per_iter):
            z = torch.randn(x.size(0), args.latent_dim, device=x.device)
            z_fake, x_fake, z, z_fake_mean = model(x, z)

            # ================== TRAIN ENCODER ================== #
            model.zero_grad(set_to_none=False)  # torch 1.x zero_grad()
            encoder_score = discriminator(x, z_fake)
            loss_encoder = encoder_score.mean()

            if sup_flag.sum() > 0:
                label_z = z_fake_mean[sup_flag, :num_labels]
                sup_loss = celoss(label_z, label)
            else:
                sup_loss = torch.zeros([1], device=device)
            loss_encoder = loss_encoder + sup_loss * args.sup_coef

            loss_encoder.backward()
            encoder_optimizer.step()


            # ================== TRAIN GENERATOR ================== #
            model.zero_grad(set_to_none=False)  # torch 1.x zero_grad()

            decoder_score = discriminator(x_fake, z)
            r_decoder = torch.exp(decoder_score.detach())
            s_decoder = r_decoder.clamp(0.5, 2)
            loss_decoder = -(s_decoder * decoder_score).mean()

            loss_decoder.backward()
            decoder_optimizer.step()
            if 'scm' in args.prior:
                model.module.prior.set_zero_grad()
                A_optimizer.step()
                prior_optimizer.step()

        if batch_idx == 0 or (batch_idx + 1) % print_every == 0:
            print('Train Epoch: {} [{}]\tD loss: {:.4f}, Encoder loss: {:.4f}, Decoder loss: {:.4f}, Sup loss: {:.4f}'.format(
                epoch, batch_idx, loss_d.item(), loss_encoder.item(), loss_decoder.item(), sup_loss.item()))


if __name__ == '__main__':
    main()
