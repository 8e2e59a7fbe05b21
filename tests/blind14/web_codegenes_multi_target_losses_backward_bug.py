# Source: https://www.codegenes.net/blog/pytorch-backward-sum
"""The blog on PyTorch's backward with the sum reduction: `loss.backward()` works directly only when
the loss is a scalar; a multi-element loss must be reduced (summed) first or given a gradient
tensor. Here a multi-target regressor (price, volume, volatility heads) uses a helper that averages
the squared error over the batch only, one loss per target; the trainer backwards that 3-element
tensor and torch raises "grad can be implicitly created only for scalar outputs". Fix from the
blog: sum the per-target losses into a scalar before `backward()`.
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
        loss = per_target_mse(self.model(x), y)
        loss.backward()  # expect: GG105
        self.opt.step()
        return dict(zip(TARGETS, loss.tolist()))


trainer = Trainer(MultiTargetNet(6))
x, y = torch.randn(40, 6), torch.randn(40, 3)
for epoch in range(3):
    print(epoch, trainer.step(x, y))
