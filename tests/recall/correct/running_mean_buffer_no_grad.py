"""A normaliser whose running mean buffer is updated in place under torch.no_grad()."""
import torch
import torch.nn as nn


class Norm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.register_buffer("mean", torch.zeros(d))
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.mean.mul_(0.9).add_(0.1 * x.mean(0))
            self.count += 1
        return x - self.mean


net = nn.Sequential(nn.Linear(3, 4), Norm(4), nn.Linear(4, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    loss = net(torch.randn(5, 3)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
