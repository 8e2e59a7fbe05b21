# Source: https://www.codegenes.net/blog/pytorch-backward-sum
"""The multi-target trainer with the blog's fix: the per-target losses are summed into a scalar and
that is backwarded; the per-target values are still reported.
"""
import torch
import torch.nn as nn

TARGETS = ("price", "volume", "volatility")


class MultiTargetNet(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU())
        self.heads = nn.ModuleDict({name: nn.Linear(32, 1) for name in TARGETS})

    def forward(self, x):
        h = self.trunk(x)
        return torch.cat([self.heads[name](h) for name in TARGETS], dim=1)


def per_target_mse(pred, target):
    return ((pred - target) ** 2).mean(dim=0)


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step(self, x, y):
        self.opt.zero_grad()
        losses = per_target_mse(self.model(x), y)
        loss = losses.sum()
        loss.backward()
        self.opt.step()
        return dict(zip(TARGETS, losses.tolist()))


trainer = Trainer(MultiTargetNet(6))
x, y = torch.randn(40, 6), torch.randn(40, 3)
for epoch in range(3):
    print(epoch, trainer.step(x, y))
