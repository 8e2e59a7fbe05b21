# Source: https://www.pythontutorials.net/blog/autograd-grad-for-tensor-in-pytorch/
"""The blog's input-gradient computation with its fix: `torch.autograd.grad(y, x,
grad_outputs=torch.ones_like(y), ...)` gives each sample's dy/dx (the samples are independent), and
the derivative-matching loss trains through it.
"""
import torch
import torch.nn as nn


class Surrogate(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x)


def input_sensitivity(model, x):
    x = x.clone().requires_grad_(True)
    y = model(x)
    (dy_dx,) = torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y), create_graph=True)
    return y, dy_dx


model = Surrogate()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.rand(32, 2)
target = torch.sin(x[:, :1]) + x[:, 1:] ** 2
target_slope = torch.cat([torch.cos(x[:, :1]), 2 * x[:, 1:]], dim=1)
for step in range(4):
    y, dy_dx = input_sensitivity(model, x)
    loss = ((y - target) ** 2).mean() + ((dy_dx - target_slope) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
