"""VAE with a learnable Gaussian prior whose distribution object is built once in __init__ from
the prior's parameters; the KL term of every step goes through it."""
import torch
import torch.nn as nn
from torch.distributions import Normal, kl_divergence


class VAE(nn.Module):
    def __init__(self, x_dim=8, z_dim=2):
        super().__init__()
        self.enc = nn.Linear(x_dim, 2 * z_dim)
        self.dec = nn.Linear(z_dim, x_dim)
        self.prior_mu = nn.Parameter(torch.zeros(z_dim))
        self.prior_log_std = nn.Parameter(torch.zeros(z_dim))
        self.prior = Normal(self.prior_mu, self.prior_log_std.exp())

    def forward(self, x):
        mu, log_std = self.enc(x).chunk(2, dim=-1)
        q = Normal(mu, log_std.exp())
        z = q.rsample()
        recon = self.dec(z)
        kl = kl_divergence(q, self.prior).sum(-1).mean()
        return recon, kl


vae = VAE()
opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(5, 8)
    recon, kl = vae(x)
    loss = (recon - x).pow(2).sum(-1).mean() + kl
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
