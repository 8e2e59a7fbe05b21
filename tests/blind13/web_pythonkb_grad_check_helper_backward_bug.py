# Source: https://pythonkb.com/python-pytorch-runtimeerror-trying-to-backward-through-the-graph-a-second-time-but-the-buffers-have-already-been-freed
"""The article's "Trying to backward through the graph a second time, but the buffers have already
been freed": `y.backward()` called twice on one graph. Here a trainer runs a debugging helper that
backwards the loss to print per-layer gradient norms, then its own step backwards the same loss;
the second backward raises. The article offers retain_graph=True; the right fix here is to backward
once and read the gradient norms after that single backward (retaining would also double the
accumulated gradients).
"""
import torch
import torch.nn as nn


def log_grad_norms(model, loss):
    loss.backward()
    return {name: p.grad.norm().item() for name, p in model.named_parameters()}


class Trainer:
    def __init__(self, model, lr):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)
        self.criterion = nn.MSELoss()

    def step(self, x, y, debug=False):
        self.opt.zero_grad()
        loss = self.criterion(self.model(x), y)
        if debug:
            print(log_grad_norms(self.model, loss))
        loss.backward()  # expect: GG101
        self.opt.step()
        return loss.item()


model = nn.Sequential(nn.Linear(5, 10), nn.Tanh(), nn.Linear(10, 1))
trainer = Trainer(model, lr=0.05)
x, y = torch.randn(16, 5), torch.randn(16, 1)
for it in range(3):
    print(it, trainer.step(x, y, debug=(it == 0)))
