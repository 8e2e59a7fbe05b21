"""Notebook-style linear regression whose labels come from a "true" layer under torch.no_grad()."""
import torch
from torch import nn

true_model = nn.Linear(3, 1)
X = torch.randn(40, 3)
with torch.no_grad():
    y = true_model(X) + 0.01 * torch.randn(40, 1)

net = nn.Linear(3, 1)
loss_fn = nn.MSELoss()
trainer = torch.optim.SGD(net.parameters(), lr=0.03)
for epoch in range(3):
    for i in range(0, 40, 10):
        l = loss_fn(net(X[i:i + 10]), y[i:i + 10])
        trainer.zero_grad()
        l.backward()
        trainer.step()
