# Source: https://www.codegenes.net/blog/intermediate-graidnet-is-none-pytorch
"""The blog's network y = g(h(x)) whose intermediate tensor z = h(x) the user wants the gradient of:
here a two-layer regressor keeps its hidden activation in a dict of the model, and the training loop
reads `model.cache["hidden"].grad` after `loss.backward()` to log it. The hidden activation is not a
leaf: torch warns "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed" and
returns None. Fix from the post: call `retain_grad()` on the intermediate tensor before the backward.
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
        self.cache["hidden"] = z
        return self.g(z)


def grad_report(model):
    z = model.cache["hidden"]
    return z.grad  # expect: GG106


model = TwoStageNet(4, 8)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(16, 4)
y = x.sum(1, keepdim=True)
for epoch in range(3):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    print(epoch, loss.item(), grad_report(model))
    opt.step()
