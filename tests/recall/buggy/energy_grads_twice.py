"""Gradients of one energy taken twice with torch.autograd.grad for logging; the first call frees
the graph."""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
x = torch.randn(16, 3)
energy = net(x).sum()
for k in range(2):
    grads = torch.autograd.grad(energy, list(net.parameters()))  # expect: GG101
    print([g.norm().item() for g in grads])
