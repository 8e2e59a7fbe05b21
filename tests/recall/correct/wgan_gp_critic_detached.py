"""A WGAN-GP critic loop on a detached fake, then the generator step on the fake's graph."""
import torch
import torch.nn as nn

G = nn.Linear(2, 2)
D = nn.Linear(2, 1)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-4)
opt_g = torch.optim.Adam(G.parameters(), lr=1e-4)
for it in range(3):
    real = torch.randn(8, 2)
    fake = G(torch.randn(8, 2))
    for _ in range(2):
        alpha = torch.rand(8, 1)
        inter = (alpha * real + (1 - alpha) * fake.detach()).requires_grad_(True)
        grad = torch.autograd.grad(D(inter).sum(), inter, create_graph=True)[0]
        gp = ((grad.norm(2, dim=1) - 1) ** 2).mean()
        d_loss = D(fake.detach()).mean() - D(real).mean() + 10 * gp
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
    g_loss = -D(fake).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
