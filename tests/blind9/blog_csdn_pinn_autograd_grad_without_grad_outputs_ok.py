# Source: https://blog.csdn.net/waitingwinter/article/details/105774720
"""The post's answer: for a vector output pass grad_outputs, here torch.ones_like(u), which
gives each point's derivative du_i/dx_i since every u_i depends on its own x_i only."""
import math
import torch
import torch.nn as nn


class PINN(nn.Module):
    def __init__(self, hidden=20):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, hidden),
                                 nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


def derivative(u, x):
    return torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]


model = PINN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x_bc = torch.tensor([[0.0], [1.0]])

for epoch in range(3):
    x = torch.rand(32, 1, requires_grad=True)
    u = model(x)
    u_xx = derivative(derivative(u, x), x)
    residual = u_xx + math.pi ** 2 * torch.sin(math.pi * x)
    loss = (residual ** 2).mean() + (model(x_bc) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())
