"""MoCo-style contrastive learning: keys come from a momentum encoder (a deep copy of the query
encoder) that is run with grad enabled, and go into the negatives queue without detach."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

encoder_q = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 8))
encoder_k = copy.deepcopy(encoder_q)
optimizer = torch.optim.SGD(encoder_q.parameters(), lr=0.03, momentum=0.9)
queue = F.normalize(torch.randn(16, 8), dim=1)
m, T = 0.99, 0.2


def momentum_update():
    for p_q, p_k in zip(encoder_q.parameters(), encoder_k.parameters()):
        p_k.data = p_k.data * m + p_q.data * (1.0 - m)


for step in range(3):
    x = torch.randn(4, 10)
    q = F.normalize(encoder_q(x + 0.1 * torch.randn_like(x)), dim=1)
    momentum_update()
    k = F.normalize(encoder_k(x + 0.1 * torch.randn_like(x)), dim=1)
    l_pos = (q * k).sum(1, keepdim=True)
    l_neg = q @ queue.t()
    logits = torch.cat([l_pos, l_neg], dim=1) / T
    loss = F.cross_entropy(logits, torch.zeros(4, dtype=torch.long))
    optimizer.zero_grad()
    loss.backward()  # expect: GG101
    optimizer.step()
    queue = torch.cat([k, queue], dim=0)[:16]
