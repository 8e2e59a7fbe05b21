# Source: https://programmerteach.com/p/concerning-pytorch-under-gan-loss-target-backward-and-step-and-other-precautions
"""The post "concerning pytorch under GAN loss target backward and step and other precautions":
G and D are one-channel 1x1 convolutions, D_loss = D(Y.detach()) ** 2 and G_loss = D(Y) ** 2 are
built from one forward pass Y = G(X). The post's first, correct order backwards both losses and
then steps; the wrong order it warns about updates D (D_optim.step(), an in-place write of
D.weight) before G_loss is backwarded. D(Y) saved D.weight to pass the gradient back to Y, so the
generator's backward finds it at a newer version. A small training loop over random batches."""
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
    D_optim.step()                      # D.weight written in place ...
    set_requires_grad(D, False)
    G_loss.backward()  # expect: GG103
    set_requires_grad(D, True)
    G_optim.step()
    print(step, D_loss.item(), G_loss.item())
