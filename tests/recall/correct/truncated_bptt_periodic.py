"""Truncated backpropagation through time: every fourth step, backward, step and detach the hidden
state."""
import torch
import torch.nn as nn

cell = nn.RNNCell(2, 4)
head = nn.Linear(4, 1)
opt = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.01)
h = torch.zeros(1, 4)
loss = 0
for t in range(12):
    x = torch.randn(1, 2)
    h = cell(x, h)
    loss = loss + head(h).pow(2).sum()
    if (t + 1) % 4 == 0:
        opt.zero_grad()
        loss.backward()
        opt.step()
        h = h.detach()
        loss = 0
