"""A Dataset returning dicts of raw tensors, loaded through a DataLoader every epoch."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Pairs(Dataset):
    def __init__(self, n):
        self.x = torch.randn(n, 3)
        self.y = self.x.sum(1, keepdim=True)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"x": self.x[i], "y": self.y[i]}


model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for batch in DataLoader(Pairs(8), batch_size=4):
        loss = (model(batch["x"]) - batch["y"]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
