# Source: https://www.codegenes.net/blog/intermediate-graidnet-is-none-pytorch
"""The blog's network y = g(h(x)) with its fix: the model calls `retain_grad()` on the intermediate
tensor z = h(x) it keeps in its dict, so after `loss.backward()` the training loop's
`model.cache["hidden"].grad` holds the hidden activation's gradient (no warning, not None).
"""
import torch
import torch.nn as nn


class TwoStageNet(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.h = nn.Linear(n_in, n_hidden)
        self.g = nn.Linear(n_hidden, 1)
        self.cache = {}

    def forward(self, x):
        z = torch.tanh(self.h(x))
        z.retain_grad()
        self.cache["hidden"] = z
        return self.g(z)


def grad_report(model):
    z = model.cache["hidden"]
    return z.grad


model = TwoStageNet(4, 8)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(16, 4)
y = x.sum(1, keepdim=True)
for epoch in range(3):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    print(epoch, loss.item(), grad_report(model).norm().item())
    opt.step()
