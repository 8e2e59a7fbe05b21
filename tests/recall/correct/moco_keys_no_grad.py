"""MoCo-style training: momentum update and key encoding under torch.no_grad()."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

encoder_q = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 8))
encoder_k = copy.deepcopy(encoder_q)
for p in encoder_k.parameters():
    p.requires_grad = False
optimizer = torch.optim.SGD(encoder_q.parameters(), lr=0.03, momentum=0.9)
queue = F.normalize(torch.randn(16, 8), dim=1)
for step in range(3):
    x = torch.randn(4, 10)
    q = F.normalize(encoder_q(x + 0.1 * torch.randn_like(x)), dim=1)
    with torch.no_grad():
        for p_q, p_k in zip(encoder_q.parameters(), encoder_k.parameters()):
            p_k.mul_(0.99).add_(p_q, alpha=0.01)
        k = F.normalize(encoder_k(x + 0.1 * torch.randn_like(x)), dim=1)
    logits = torch.cat([(q * k).sum(1, keepdim=True), q @ queue.t()], dim=1) / 0.2
    loss = F.cross_entropy(logits, torch.zeros(4, dtype=torch.long))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    queue = torch.cat([k, queue], dim=0)[:16]
