"""Per-layer hidden states collected in a list and detached with a comprehension after each update."""
import torch
import torch.nn as nn

cells = nn.ModuleList([nn.GRUCell(3, 3) for _ in range(2)])
opt = torch.optim.SGD(cells.parameters(), lr=0.1)
hs = [torch.zeros(1, 3) for _ in range(2)]
for t in range(4):
    x = torch.randn(1, 3)
    new = []
    for i, cell in enumerate(cells):
        x = cell(x, hs[i])
        new.append(x)
    loss = x.pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    hs = [h.detach() for h in new]
