# Source: https://runebook.dev/ja/docs/pytorch/generated/torch.tensor.backward
"""The regression trainer with the fix (the page's: one backward per computed loss): the
gradient-norm logger reads the `.grad` that the trainer's single backward filled, before the step.
"""
import torch
import torch.nn as nn


class GradNormLogger:
    def __init__(self, model):
        self.model = model
        self.history = []

    def log(self):
        total = sum(p.grad.norm() ** 2 for p in self.model.parameters()) ** 0.5
        self.history.append(total.item())


def train_step(model, opt, criterion, logger, x, y):
    opt.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    logger.log()
    opt.step()
    return loss.item()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
logger = GradNormLogger(model)
x, y = torch.randn(64, 10), torch.randn(64, 1)
for step in range(3):
    print(step, train_step(model, opt, nn.MSELoss(), logger, x, y), logger.history[-1])
