# Source: https://taourl.com/read-2512966.html
"""The TaoURL answer "How to avoid sum from autograd.grad output in Physics Informed Neural Network"
builds a PINN for the 1D heat equation whose derivatives are taken with
`torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)`. Here the PINN's
`derivative` helper leaves `grad_outputs` out: `u` is the network's (N, 1) output, not a scalar, so
`autograd.grad` raises "grad can be implicitly created only for scalar outputs" on the first
residual. Fix (the answer's code): pass `grad_outputs=torch.ones_like(u)` (each row of u depends
only on its own x, so this gives the pointwise derivatives).
"""
import torch
import torch.nn as nn


class PINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 20)
        self.fc2 = nn.Linear(20, 20)
        self.fc3 = nn.Linear(20, 1)

    def forward(self, x, t):
        h = torch.tanh(self.fc1(torch.cat([x, t], dim=1)))
        h = torch.tanh(self.fc2(h))
        return self.fc3(h)


def derivative(u, wrt):
    return torch.autograd.grad(u, wrt, create_graph=True)[0]  # expect: GG105


def heat_residual(model, x, t, alpha=0.1):
    u = model(x, t)
    u_t = derivative(u, t)
    u_x = derivative(u, x)
    u_xx = derivative(u_x, x)
    return u_t - alpha * u_xx


def boundary_loss(model, n=16):
    t = torch.rand(n, 1)
    zeros, ones = torch.zeros(n, 1), torch.ones(n, 1)
    x0 = torch.rand(n, 1)
    return (model(zeros, t) ** 2).mean() + (model(ones, t) ** 2).mean() + \
        ((model(x0, torch.zeros(n, 1)) - torch.sin(torch.pi * x0)) ** 2).mean()


torch.manual_seed(0)
model = PINN()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for it in range(3):
    x = torch.rand(64, 1, requires_grad=True)
    t = torch.rand(64, 1, requires_grad=True)
    loss = (heat_residual(model, x, t) ** 2).mean() + boundary_loss(model)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(it, loss.item())
