"""A dict of loss terms rebuilt every step, summed by key and logged."""
import torch
import torch.nn as nn

net = nn.Linear(3, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    out = net(torch.randn(4, 3))
    losses = {"mse": out.pow(2).mean(), "l1": out.abs().mean()}
    total = losses["mse"] + 0.1 * losses["l1"]
    opt.zero_grad()
    total.backward()
    opt.step()
    print({k: v.item() for k, v in losses.items()})
