"""A stack of GRU cells whose per-layer states live in a list indexed by layer and are carried
across time steps."""
import torch
import torch.nn as nn

cells = nn.ModuleList([nn.GRUCell(3, 3) for _ in range(2)])
opt = torch.optim.SGD(cells.parameters(), lr=0.1)
states = [torch.zeros(1, 3) for _ in range(2)]
for t in range(3):
    x = torch.randn(1, 3)
    for i, cell in enumerate(cells):
        states[i] = cell(x, states[i])
        x = states[i]
    loss = x.pow(2).sum()
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
