"""A custom normaliser whose running statistics are updated in place from the batch without
torch.no_grad(): the buffers pick up the batch's graph and the next step's forward reaches it."""
import torch
import torch.nn as nn


class RunningNorm(nn.Module):
    def __init__(self, dim, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("var", torch.ones(dim))

    def forward(self, x):
        if self.training:
            self.mean.mul_(1 - self.momentum).add_(self.momentum * x.mean(0))
            self.var.mul_(1 - self.momentum).add_(self.momentum * x.var(0))
        return (x - self.mean) / (self.var + 1e-5).sqrt()


model = nn.Sequential(nn.Linear(3, 6), RunningNorm(6), nn.ReLU(), nn.Linear(6, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(3):
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
