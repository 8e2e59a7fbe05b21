# Source: https://lxadm.com/grad-can-be-implicitly-created-only-for-scalar-outputs/
"""The MAML learner with the guide's fix: the support loss is the mean squared error, a scalar, so
the inner step's `torch.autograd.grad(loss, params, create_graph=True)` needs no grad_outputs.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Learner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(1, 40)
        self.fc2 = nn.Linear(40, 1)

    def forward(self, x, params=None):
        if params is None:
            params = list(self.parameters())
        w1, b1, w2, b2 = params
        return F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2)


def support_loss(pred, y):
    return F.mse_loss(pred, y)


def adapt(model, x, y, inner_lr, steps):
    params = list(model.parameters())
    for _ in range(steps):
        loss = support_loss(model(x, params), y)
        grads = torch.autograd.grad(loss, params, create_graph=True)
        params = [p - inner_lr * g for p, g in zip(params, grads)]
    return params


def sample_task(n=10):
    amp, phase = torch.rand(1) * 4 + 1, torch.rand(1) * 3
    xs = torch.rand(2 * n, 1) * 10 - 5
    ys = amp * torch.sin(xs + phase)
    return xs[:n], ys[:n], xs[n:], ys[n:]


model = Learner()
meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for it in range(3):
    meta_opt.zero_grad()
    meta_loss = 0.0
    for _ in range(4):
        xs, ys, xq, yq = sample_task()
        fast = adapt(model, xs, ys, inner_lr=0.01, steps=1)
        meta_loss = meta_loss + F.mse_loss(model(xq, fast), yq)
    meta_loss.backward()
    meta_opt.step()
    print(it, meta_loss.item())
