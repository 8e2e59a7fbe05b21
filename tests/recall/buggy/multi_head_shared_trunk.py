"""Multi-task heads over one trunk output, each head's loss backwarded separately."""
import torch
import torch.nn as nn

body = nn.Linear(4, 8)
heads = nn.ModuleList([nn.Linear(8, 1) for _ in range(3)])
opt = torch.optim.SGD([*body.parameters(), *heads.parameters()], lr=0.1)
x = torch.randn(5, 4)
shared = torch.relu(body(x))
opt.zero_grad()
for head in heads:
    head(shared).pow(2).mean().backward()  # expect: GG101
opt.step()
