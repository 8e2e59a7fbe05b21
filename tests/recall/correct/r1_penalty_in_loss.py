"""Discriminator step with an R1 penalty taken (create_graph=True) before the single backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F

D = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
G = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 6))
d_opt = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.0, 0.99))
for step in range(2):
    real_img = torch.randn(8, 6).requires_grad_()
    fake_img = G(torch.randn(8, 3)).detach()
    real_pred, fake_pred = D(real_img), D(fake_img)
    grad_real, = torch.autograd.grad(real_pred.sum(), real_img, create_graph=True)
    r1 = grad_real.pow(2).sum(1).mean()
    d_loss = F.softplus(fake_pred).mean() + F.softplus(-real_pred).mean() + 5.0 * r1
    d_opt.zero_grad()
    d_loss.backward()
    d_opt.step()
