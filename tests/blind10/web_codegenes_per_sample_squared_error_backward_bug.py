# Source: https://www.codegenes.net/blog/backward-pytorch-runtimeerror
"""The post "Understanding and Handling Backward PyTorch RuntimeError": "one of the most common
errors is passing a non-scalar tensor to the backward() method", which raises "grad can be
implicitly created only for scalar outputs"; the fix is to reduce the loss to a scalar (mean or
sum) first. A small regression trainer class whose loss method returns the per-sample squared
errors, kept unreduced for a per-sample log, and whose step backwards them directly."""
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
        per_sample.backward()  # expect: GG105
        self.optimizer.step()
        return per_sample


trainer = Trainer(nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1)))
for epoch in range(3):
    x = torch.randn(10, 3)
    y = x.sum(dim=1, keepdim=True)
    print(epoch, trainer.step(x, y).mean().item())
