"""Activation checkpointing over a stack of blocks (torch.utils.checkpoint, non-reentrant)."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

blocks = nn.ModuleList([nn.Sequential(nn.Linear(8, 8), nn.GELU()) for _ in range(3)])
head = nn.Linear(8, 1)
opt = torch.optim.Adam([*blocks.parameters(), *head.parameters()], lr=1e-3)
for step in range(2):
    h = torch.randn(4, 8)
    for block in blocks:
        h = checkpoint(block, h, use_reentrant=False)
    loss = head(h).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
