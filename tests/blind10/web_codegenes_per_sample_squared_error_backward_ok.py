# Source: https://www.codegenes.net/blog/backward-pytorch-runtimeerror
"""The post's fix: reduce the loss to a scalar before backward (the per-sample values are still
logged, detached)."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Trainer:
    def __init__(self, model, lr=0.01):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.history = []

    def loss(self, x, y):
        return ((self.model(x) - y) ** 2).squeeze(1)

    def step(self, x, y):
        self.optimizer.zero_grad()
        per_sample = self.loss(x, y)
        self.history.append(per_sample.detach())
        per_sample.mean().backward()
        self.optimizer.step()
        return per_sample


trainer = Trainer(nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1)))
for epoch in range(3):
    x = torch.randn(10, 3)
    y = x.sum(dim=1, keepdim=True)
    print(epoch, trainer.step(x, y).mean().item())
