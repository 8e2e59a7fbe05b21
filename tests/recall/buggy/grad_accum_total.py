"""Gradient accumulation gone wrong: the micro-batch losses are summed into `total` and the sum is
backwarded after every micro-batch, so the second backward reaches the first micro-batch again."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.Linear(12, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
accum_steps = 4
data = [(torch.randn(3, 6), torch.randint(0, 2, (3,))) for _ in range(8)]

total = 0
for i, (x, y) in enumerate(data):
    total = total + nn.functional.cross_entropy(model(x), y) / accum_steps
    total.backward()  # expect: GG101
    if (i + 1) % accum_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
        total = 0
