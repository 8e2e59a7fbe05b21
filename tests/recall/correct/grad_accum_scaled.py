"""Gradient accumulation: each micro-batch's scaled loss is backwarded once; step every 4."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.Linear(12, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
accum_steps = 4
running = 0.0
for i in range(8):
    x, y = torch.randn(3, 6), torch.randint(0, 2, (3,))
    loss = nn.functional.cross_entropy(model(x), y) / accum_steps
    loss.backward()
    running += loss.item()
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
