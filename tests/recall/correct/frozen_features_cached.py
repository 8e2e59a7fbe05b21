"""Backbone features computed once under torch.no_grad() and reused by index every epoch."""
import torch
import torch.nn as nn

backbone = nn.Linear(6, 4)
head = nn.Linear(4, 2)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
raw = [torch.randn(3, 6) for _ in range(3)]
with torch.no_grad():
    feats = [backbone(r) for r in raw]
for epoch in range(3):
    for i in range(len(feats)):
        loss = head(feats[i]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    extra = head(feats[0]).sum()
    extra.backward()
