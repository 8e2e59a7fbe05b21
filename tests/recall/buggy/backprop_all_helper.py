"""Per-joint pose losses built with a list comprehension and handed to a helper that backwards
each of them; they all come from one network output."""
import torch
import torch.nn as nn


def backprop_all(losses):
    for loss in losses:
        loss.backward()  # expect: GG101


net = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 3 * 2))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
x = torch.randn(5, 12)
targets = torch.randn(5, 3, 2)
pred = net(x).view(5, 3, 2)
joint_losses = [(pred[:, j] - targets[:, j]).pow(2).mean() for j in range(3)]
opt.zero_grad()
backprop_all(joint_losses)
opt.step()
