"""itertools.repeat over one batch put through a learned augmentation once."""
import itertools
import torch
import torch.nn as nn

aug = nn.Linear(3, 3)
model = nn.Linear(3, 1)
opt = torch.optim.SGD([*aug.parameters(), *model.parameters()], lr=0.1)
x = torch.randn(4, 3)
for batch in itertools.repeat(aug(x), 3):
    loss = model(batch).pow(2).mean()
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
