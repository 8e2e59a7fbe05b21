# Source: https://blog.csdn.net/waitingwinter/article/details/105774720
"""The CSDN post on torch.autograd.grad for solving PDEs with neural networks (derivatives of
the network's output with respect to its input, not its weights): "grad_outputs: if outputs is
a scalar it can be omitted; if outputs is a vector this argument must be given, otherwise the
following error is raised" - grad can be implicitly created only for scalar outputs. A small
physics-informed network for u'' = -pi^2 sin(pi x) on [0, 1] with u(0) = u(1) = 0, whose
derivative helper calls autograd.grad on the vector u(x) of all collocation points without
grad_outputs."""
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
    return torch.autograd.grad(u, x, create_graph=True)[0]  # expect: GG105


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
