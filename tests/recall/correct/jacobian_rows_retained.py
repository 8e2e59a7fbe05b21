"""Jacobian rows, one autograd.grad per output, keeping the graph for the next row."""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
x = torch.randn(3, requires_grad=True)
y = net(x)
rows = [torch.autograd.grad(y[i], x, retain_graph=True)[0] for i in range(y.numel())]
print(torch.stack(rows).shape)
