"""Fixed-iteration training with itertools.cycle over raw batches; the learned augmentation runs
inside the loop, and map() builds each step's inputs lazily."""
import itertools

import torch
import torch.nn as nn

augment = nn.Linear(3, 3)
model = nn.Linear(3, 1)
opt = torch.optim.Adam([*augment.parameters(), *model.parameters()], lr=1e-3)
raw = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
for it, (x, y) in zip(range(4), map(lambda b: (b[0] + 0.1 * augment(b[0]), b[1]), itertools.cycle(raw))):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
