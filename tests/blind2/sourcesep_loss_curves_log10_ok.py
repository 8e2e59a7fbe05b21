# Source: https://github.com/source-separation/tutorial/issues/28
"""The source-separation tutorial's "Signs of Healthy Training" cell (training/gradient_descent),
with the loss history detached as the issue asks: train() records loss.item() for every
iteration, so the plotting cell's np.log10(losses[j]) works on plain numbers. matplotlib is not
installed here, so the curves are only computed, not drawn; nussl's data is replaced by a random
line."""
import copy
import numpy as np
import torch
from torch import nn


class Line(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(1, 1)

    def forward(self, x):
        y = self.layer(x)
        return y


def train(model, x, y, lr, n_iterations=25):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.L1Loss()
    grad_norms, losses = [], []
    for _ in range(n_iterations):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        grad_norm = 0
        for p in model.parameters():
            grad_norm += p.grad.norm(2).item() ** 2
        grad_norms.append(grad_norm ** .5)
        losses.append(loss.item())
        optimizer.step()
    return grad_norms, losses


x = torch.randn(100, 1)
y = 3 * x + 1 + 0.1 * torch.randn(100, 1)
line = Line()

LEARNING_RATES = [1e-3, 1e-2, 1e-1]
grad_norms, losses = [], []
for lr in LEARNING_RATES:
    _grad_norms, _losses = train(copy.deepcopy(line), x, y, lr)
    grad_norms.append(_grad_norms)
    losses.append(_losses)

curves = []
for j, lr in enumerate(LEARNING_RATES):
    curves.append(('grad norm', lr, np.asarray(grad_norms[j])))  # ax[0].plot(grad_norms[j], ...)

for j, lr in enumerate(LEARNING_RATES):
    curves.append(('log(loss)', lr, np.log10(losses[j])))
