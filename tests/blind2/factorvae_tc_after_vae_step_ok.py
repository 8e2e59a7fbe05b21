# Source: https://github.com/1Konny/FactorVAE/issues/15
"""FactorVAE's Solver.train() with the discriminator's loss computed on z.detach(): D_z = self.D(z)
feeds only the VAE's total-correlation term, and D_tc_loss scores a fresh self.D(z.detach()), so
its backward reaches only the discriminator and the VAE's in-place update before it does not
matter (the retained graph is no longer needed either). Small 16x16 images stand in for dSprites."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Discriminator(nn.Module):
    def __init__(self, z_dim):
        super(Discriminator, self).__init__()
        self.z_dim = z_dim
        self.net = nn.Sequential(
            nn.Linear(z_dim, 32),
            nn.LeakyReLU(0.2, True),
            nn.Linear(32, 32),
            nn.LeakyReLU(0.2, True),
            nn.Linear(32, 2),
        )

    def forward(self, z):
        return self.net(z).squeeze()


class FactorVAE1(nn.Module):
    """Encoder and Decoder architecture for 2D Shapes data."""
    def __init__(self, z_dim=4):
        super(FactorVAE1, self).__init__()
        self.z_dim = z_dim
        self.encode = nn.Sequential(
            nn.Conv2d(1, 8, 4, 2, 1),
            nn.ReLU(True),
            nn.Conv2d(8, 8, 4, 2, 1),
            nn.ReLU(True),
            nn.Conv2d(8, 2*z_dim, 4),
        )
        self.decode = nn.Sequential(
            nn.Conv2d(z_dim, 8, 1),
            nn.ReLU(True),
            nn.ConvTranspose2d(8, 8, 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(8, 8, 4, 2, 1),
            nn.ReLU(True),
            nn.ConvTranspose2d(8, 1, 4, 2, 1),
        )

    def reparametrize(self, mu, logvar):
        std = logvar.mul(0.5).exp_()
        eps = std.data.new(std.size()).normal_()
        return eps.mul(std).add_(mu)

    def forward(self, x, no_dec=False):
        stats = self.encode(x)
        mu = stats[:, :self.z_dim]
        logvar = stats[:, self.z_dim:]
        z = self.reparametrize(mu, logvar)

        if no_dec:
            return z.squeeze()
        else:
            x_recon = self.decode(z).view(x.size())
            return x_recon, mu, logvar, z.squeeze()


def recon_loss(x, x_recon):
    n = x.size(0)
    return F.binary_cross_entropy_with_logits(x_recon, x, reduction='sum').div(n)


def kl_divergence(mu, logvar):
    kld = -0.5*(1+logvar-mu**2-logvar.exp()).sum(1).mean()
    return kld


def permute_dims(z):
    assert z.dim() == 2

    B, _ = z.size()
    perm_z = []
    for z_j in z.split(1, 1):
        perm = torch.randperm(B).to(z.device)
        perm_z_j = z_j[perm]
        perm_z.append(perm_z_j)

    return torch.cat(perm_z, 1)


class Solver(object):
    def __init__(self, z_dim=4, gamma=6.4, batch_size=8, max_iter=2):
        self.z_dim, self.gamma, self.batch_size, self.max_iter = z_dim, gamma, batch_size, max_iter
        self.global_iter = 0
        self.VAE = FactorVAE1(z_dim)
        self.optim_VAE = torch.optim.Adam(self.VAE.parameters(), lr=1e-4, betas=(0.9, 0.999))
        self.D = Discriminator(z_dim)
        self.optim_D = torch.optim.Adam(self.D.parameters(), lr=1e-4, betas=(0.5, 0.9))
        self.data_loader = [(torch.rand(batch_size, 1, 16, 16).round(), torch.rand(batch_size, 1, 16, 16).round())
                            for _ in range(max_iter)]

    def train(self):
        ones = torch.ones(self.batch_size, dtype=torch.long)
        zeros = torch.zeros(self.batch_size, dtype=torch.long)

        out = False
        while not out:
            for x_true1, x_true2 in self.data_loader:
                self.global_iter += 1

                x_recon, mu, logvar, z = self.VAE(x_true1)
                vae_recon_loss = recon_loss(x_true1, x_recon)
                vae_kld = kl_divergence(mu, logvar)

                D_z = self.D(z)
                vae_tc_loss = (D_z[:, :1] - D_z[:, 1:]).mean()

                vae_loss = vae_recon_loss + vae_kld + self.gamma*vae_tc_loss

                self.optim_VAE.zero_grad()
                vae_loss.backward()
                self.optim_VAE.step()

                z_prime = self.VAE(x_true2, no_dec=True)
                z_pperm = permute_dims(z_prime).detach()
                D_z_pperm = self.D(z_pperm)
                D_tc_loss = 0.5*(F.cross_entropy(self.D(z.detach()), zeros) + F.cross_entropy(D_z_pperm, ones))

                self.optim_D.zero_grad()
                D_tc_loss.backward()
                self.optim_D.step()

                if self.global_iter >= self.max_iter:
                    out = True
                    break


Solver().train()
