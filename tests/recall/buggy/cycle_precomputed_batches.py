"""Training for a fixed number of iterations with itertools.cycle over batches whose inputs went
through a learned augmentation once, when the list was built."""
import itertools

import torch
import torch.nn as nn

augment = nn.Linear(3, 3)
model = nn.Linear(3, 1)
opt = torch.optim.Adam([*augment.parameters(), *model.parameters()], lr=1e-3)
raw = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
batches = [(x + 0.1 * augment(x), y) for x, y in raw]

for it, (x, y) in zip(range(4), itertools.cycle(batches)):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
