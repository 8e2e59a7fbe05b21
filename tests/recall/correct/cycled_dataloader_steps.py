"""A fixed number of steps over itertools.cycle(DataLoader) of raw tensors."""
import itertools
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

data = TensorDataset(torch.randn(16, 3), torch.randn(16, 1))
loader = DataLoader(data, batch_size=4, shuffle=True)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step, (x, y) in zip(range(10), itertools.cycle(loader)):
    loss = (model(x) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
