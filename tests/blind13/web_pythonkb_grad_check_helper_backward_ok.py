# Source: https://pythonkb.com/python-pytorch-runtimeerror-trying-to-backward-through-the-graph-a-second-time-but-the-buffers-have-already-been-freed
"""The trainer with its debugging helper, fixed the right way rather than with the article's
retain_graph=True: the step backwards the loss once and the helper only reads the gradient norms
that this backward left in `.grad`.
"""
import torch
import torch.nn as nn


def log_grad_norms(model):
    return {name: p.grad.norm().item() for name, p in model.named_parameters()}


class Trainer:
    def __init__(self, model, lr):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)
        self.criterion = nn.MSELoss()

    def step(self, x, y, debug=False):
        self.opt.zero_grad()
        loss = self.criterion(self.model(x), y)
        loss.backward()
        if debug:
            print(log_grad_norms(self.model))
        self.opt.step()
        return loss.item()


model = nn.Sequential(nn.Linear(5, 10), nn.Tanh(), nn.Linear(10, 1))
trainer = Trainer(model, lr=0.05)
x, y = torch.randn(16, 5), torch.randn(16, 1)
for it in range(3):
    print(it, trainer.step(x, y, debug=(it == 0)))
