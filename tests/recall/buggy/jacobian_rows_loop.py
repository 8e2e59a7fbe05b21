"""Sensitivity analysis: the rows of the Jacobian of a small network's outputs are computed one
output at a time with torch.autograd.grad, without retain_graph."""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
x = torch.randn(3, requires_grad=True)
y = net(x)
rows = []
for i in range(y.numel()):
    (row,) = torch.autograd.grad(y[i], x)  # expect: GG101
    rows.append(row)
jacobian = torch.stack(rows)
print(jacobian.shape)
