# Source: https://github.com/YannDubs/disentangling-vae/issues/62
"""disentangling-vae's FactorKLoss with a fix (the thread pointed to the PyTorch forum's advice;
this is the right one): the discriminator's loss takes its term on the VAE's latents from
latent_sample1.detach(), so d_tc_loss.backward() trains the discriminator only and never walks
back through the encoder that the VAE optimizer's step() has just updated (so the VAE loss no
longer needs retain_graph=True).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, img_size=16, latent_dim=4, hidden=32):
        super().__init__()
        self.lin1 = nn.Linear(img_size, hidden)
        self.mu_logvar_gen = nn.Linear(hidden, latent_dim * 2)
        self.latent_dim = latent_dim

    def forward(self, x):
        h = torch.relu(self.lin1(x))
        mu_logvar = self.mu_logvar_gen(h).view(-1, self.latent_dim, 2)
        return mu_logvar.unbind(-1)


class Decoder(nn.Module):
    def __init__(self, img_size=16, latent_dim=4, hidden=32):
        super().__init__()
        self.lin1 = nn.Linear(latent_dim, hidden)
        self.lin2 = nn.Linear(hidden, img_size)

    def forward(self, z):
        return torch.sigmoid(self.lin2(torch.relu(self.lin1(z))))


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = Decoder()

    def reparameterize(self, mean, logvar):
        if self.training:
            std = torch.exp(0.5 * logvar)
            return mean + std * torch.randn_like(std)
        return mean

    def forward(self, x):
        latent_dist = self.encoder(x)
        latent_sample = self.reparameterize(*latent_dist)
        return self.decoder(latent_sample), latent_dist, latent_sample

    def sample_latent(self, x):
        return self.reparameterize(*self.encoder(x))


class Discriminator(nn.Module):
    def __init__(self, latent_dim=4, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent_dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 2))

    def forward(self, z):
        return self.net(z)


def _permute_dims(latent_sample):
    perm = torch.zeros_like(latent_sample)
    batch_size, dim_z = perm.size()
    for z in range(dim_z):
        pi = torch.randperm(batch_size)
        perm[:, z] = latent_sample[pi, z]
    return perm


def _kl_normal_loss(mean, logvar):
    return (0.5 * (-1 - logvar + mean.pow(2) + logvar.exp())).mean(0).sum()


class FactorKLoss:
    def __init__(self, gamma=10.0):
        self.gamma = gamma
        self.discriminator = Discriminator()
        self.optimizer_d = torch.optim.Adam(self.discriminator.parameters(), lr=5e-5, betas=(0.5, 0.9))

    def __call__(self, data, model, optimizer):
        half = data.size(0) // 2
        data1, data2 = data[:half], data[half:]
        recon_batch, latent_dist, latent_sample1 = model(data1)
        rec_loss = F.binary_cross_entropy(recon_batch, data1, reduction="sum") / half
        kl_loss = _kl_normal_loss(*latent_dist)
        d_z = self.discriminator(latent_sample1)
        tc_loss = (d_z[:, 0] - d_z[:, 1]).mean()
        vae_loss = rec_loss + kl_loss + self.gamma * tc_loss

        optimizer.zero_grad()
        vae_loss.backward()
        optimizer.step()

        latent_sample2 = model.sample_latent(data2)
        z_perm = _permute_dims(latent_sample2).detach()
        d_z_perm = self.discriminator(z_perm)
        ones = torch.ones(half, dtype=torch.long)
        zeros = torch.zeros_like(ones)
        d_z_d = self.discriminator(latent_sample1.detach())
        d_tc_loss = 0.5 * (F.cross_entropy(d_z_d, zeros) + F.cross_entropy(d_z_perm, ones))
        self.optimizer_d.zero_grad()
        d_tc_loss.backward()
        self.optimizer_d.step()
        return vae_loss


class Trainer:
    def __init__(self, model, optimizer, loss_f):
        self.model, self.optimizer, self.loss_f = model, optimizer, loss_f

    def __call__(self, batches):
        self.model.train()
        for data in batches:
            self.loss_f(data, self.model, self.optimizer)


model = VAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
trainer = Trainer(model, optimizer, FactorKLoss())
trainer([torch.rand(8, 16) for _ in range(3)])
