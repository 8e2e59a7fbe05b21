# Source: https://programmerteach.com/p/concerning-pytorch-under-gan-loss-target-backward-and-step-and-other-precautions
"""The post's first, correct way: both losses are backwarded (G's with D's parameters frozen so
that D gets no gradient from it) before either optimizer steps, so D.weight is still the value
D(Y) saved when G_loss walks back through it."""
import torch
from torch import nn


def set_requires_grad(net: nn.Module, mode=True):
    for p in net.parameters():
        p.requires_grad_(mode)


G = nn.Conv2d(1, 1, kernel_size=1, stride=1, padding=0, bias=False)
D = nn.Conv2d(1, 1, kernel_size=1, stride=1, padding=0, bias=False)
with torch.no_grad():
    G.weight.fill_(0.5)
    D.weight.fill_(0.7)
G_optim = torch.optim.SGD(G.parameters(), lr=0.1)
D_optim = torch.optim.SGD(D.parameters(), lr=0.1)

for step in range(3):
    X = torch.rand(4, 1, 2, 2)
    G_optim.zero_grad()
    D_optim.zero_grad()
    Y = G(X)
    D_loss = (D(Y.detach()) ** 2).mean()
    G_loss = (D(Y) ** 2).mean()
    D_loss.backward()
    set_requires_grad(D, False)
    G_loss.backward()
    set_requires_grad(D, True)
    G_optim.step()
    D_optim.step()
    print(step, D_loss.item(), G_loss.item())
