"""Predictions kept in a history list across epochs and stacked into every epoch's loss."""
import torch
import torch.nn as nn

model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
history = []
for epoch in range(3):
    pred = model(torch.randn(4, 3))
    history.append(pred)
    loss = torch.stack(history).pow(2).mean()
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
