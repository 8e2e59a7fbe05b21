"""One loss per head, backwarded in a loop that keeps the graph until the last head."""
import torch
import torch.nn as nn
import torch.nn.functional as F

trunk = nn.Sequential(nn.Linear(6, 12), nn.ReLU())
heads = nn.ModuleList([nn.Linear(12, 2) for _ in range(3)])
opt = torch.optim.SGD([*trunk.parameters(), *heads.parameters()], lr=0.1)
for step in range(2):
    x, ys = torch.randn(5, 6), [torch.randint(0, 2, (5,)) for _ in range(3)]
    h = trunk(x)
    opt.zero_grad()
    for i, (head, y) in enumerate(zip(heads, ys)):
        F.cross_entropy(head(h), y).backward(retain_graph=i < len(heads) - 1)
    opt.step()
