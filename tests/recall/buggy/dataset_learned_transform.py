"""A Dataset subclass that applies a learnable input projection to all samples in __init__; the
DataLoader then collates rows of that one projected tensor."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class ProjectedDataset(Dataset):
    def __init__(self, raw, labels, projection):
        self.x = projection(raw)
        self.y = labels

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


projection = nn.Linear(5, 5)
dataset = ProjectedDataset(torch.randn(12, 5), torch.randint(0, 2, (12,)), projection)
loader = DataLoader(dataset, batch_size=4, shuffle=False)
model = nn.Linear(5, 2)
opt = torch.optim.SGD([*model.parameters(), *projection.parameters()], lr=0.1)
for xb, yb in loader:
    loss = nn.functional.cross_entropy(model(xb), yb)
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
