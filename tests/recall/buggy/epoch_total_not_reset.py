"""A loss total accumulated over batches and backwarded per epoch, but reset only before the first
epoch."""
import torch
import torch.nn as nn

model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
total = 0
for epoch in range(2):
    for b in range(2):
        total = total + model(torch.randn(4, 3)).pow(2).mean()
    opt.zero_grad()
    total.backward()  # expect: GG101
    opt.step()
