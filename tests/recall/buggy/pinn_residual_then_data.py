"""Physics-informed fit of u' = -u with observations: the derivative is taken with autograd.grad
(no create_graph, no retain_graph) for the residual term, then the data term, which shares u's
graph, is backwarded."""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
t = torch.linspace(0, 1, 12).unsqueeze(1).requires_grad_(True)
u_obs = torch.exp(-t.detach())

u = net(t)
du_dt = torch.autograd.grad(u, t, grad_outputs=torch.ones_like(u))[0]
residual = (du_dt + u.detach()).pow(2).mean()
data_loss = (u - u_obs).pow(2).mean()
opt.zero_grad()
data_loss.backward()  # expect: GG101
opt.step()
print(float(residual))
