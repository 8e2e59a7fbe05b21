# Source: https://runebook.dev/ja/docs/pytorch/generated/torch.tensor.backward
"""The runebook.dev (ja) page on `Tensor.backward` tells, as a golf sketch, of a beginner who calls
`loss.backward()` once more on the same loss "to compute it more precisely", which raises "Trying to
backward through the graph a second time". Here a small regression trainer does its backward and
then hands the loss to a gradient-norm logger that calls `loss.backward()` again to fill the
gradients it reports. Fix (the page's: one backward per computed loss): the logger reads the
`.grad` the trainer's backward already filled.
"""
import torch
import torch.nn as nn


class GradNormLogger:
    def __init__(self, model):
        self.model = model
        self.history = []

    def log(self, loss):
        self.model.zero_grad()
        loss.backward()  # expect: GG101
        total = sum(p.grad.norm() ** 2 for p in self.model.parameters()) ** 0.5
        self.history.append(total.item())


def train_step(model, opt, criterion, logger, x, y):
    opt.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    logger.log(loss)
    opt.step()
    return loss.item()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
logger = GradNormLogger(model)
x, y = torch.randn(64, 10), torch.randn(64, 1)
for step in range(3):
    print(step, train_step(model, opt, nn.MSELoss(), logger, x, y), logger.history[-1])
