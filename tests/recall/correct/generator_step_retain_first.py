"""GAN ordering with the generator step first and retain_graph=True, then the discriminator on
fake.detach()."""
import torch
import torch.nn as nn
import torch.nn.functional as F

G = nn.Sequential(nn.Linear(3, 12), nn.ReLU(), nn.Linear(12, 4))
D = nn.Sequential(nn.Linear(4, 12), nn.LeakyReLU(0.2), nn.Linear(12, 1))
opt_g, opt_d = torch.optim.Adam(G.parameters(), lr=2e-4), torch.optim.Adam(D.parameters(), lr=2e-4)
for it in range(2):
    fake = G(torch.randn(6, 3))
    g_loss = F.softplus(-D(fake)).mean()
    opt_g.zero_grad()
    g_loss.backward(retain_graph=True)
    opt_g.step()
    d_loss = F.softplus(-D(torch.randn(6, 4))).mean() + F.softplus(D(fake.detach())).mean()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
