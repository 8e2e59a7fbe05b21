"""VAE with a learnable prior whose distribution is built in forward, at every call."""
import torch
import torch.nn as nn
from torch.distributions import Normal, kl_divergence


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc, self.dec = nn.Linear(8, 4), nn.Linear(2, 8)
        self.prior_mu = nn.Parameter(torch.zeros(2))
        self.prior_log_std = nn.Parameter(torch.zeros(2))

    def forward(self, x):
        mu, log_std = self.enc(x).chunk(2, dim=-1)
        q = Normal(mu, log_std.exp())
        z = q.rsample()
        prior = Normal(self.prior_mu, self.prior_log_std.exp())
        return self.dec(z), kl_divergence(q, prior).sum(-1).mean()


vae = VAE()
opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(5, 8)
    recon, kl = vae(x)
    loss = (recon - x).pow(2).sum(-1).mean() + kl
    opt.zero_grad()
    loss.backward()
    opt.step()
