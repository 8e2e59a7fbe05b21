"""GAN whose steps name their inputs: D's backward(inputs=...) leaves the generator graph intact."""
import torch
import torch.nn as nn
import torch.nn.functional as F

G = nn.Sequential(nn.Linear(3, 12), nn.ReLU(), nn.Linear(12, 5))
D = nn.Sequential(nn.Linear(5, 12), nn.LeakyReLU(0.2), nn.Linear(12, 1))
opt_g, opt_d = torch.optim.Adam(G.parameters(), lr=2e-4), torch.optim.Adam(D.parameters(), lr=2e-4)
for step in range(2):
    fake = G(torch.randn(6, 3))
    d_loss = F.softplus(-D(torch.randn(6, 5))).mean() + F.softplus(D(fake)).mean()
    opt_d.zero_grad()
    d_loss.backward(inputs=list(D.parameters()))
    opt_d.step()
    g_loss = F.softplus(-D(fake)).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
