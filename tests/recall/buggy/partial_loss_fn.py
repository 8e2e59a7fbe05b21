"""A loss function specialised with functools.partial binds a reference embedding computed once
from the trainable model; every step's loss reuses that bound tensor."""
from functools import partial

import torch
import torch.nn as nn


def alignment_loss(pred, reference, weight):
    return weight * (pred - reference).pow(2).mean()


model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
anchor_input = torch.randn(1, 5)
loss_fn = partial(alignment_loss, reference=model(anchor_input), weight=0.5)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(3):
    x = torch.randn(4, 5)
    loss = loss_fn(model(x))
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
