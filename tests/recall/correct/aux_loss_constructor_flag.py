"""A model class with an auxiliary head switched on by a constructor argument kept on self."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, use_aux):
        super().__init__()
        self.use_aux = use_aux
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 4)
        self.aux = nn.Linear(16, 4)

    def loss(self, x, y):
        h = self.body(x)
        if self.use_aux:
            self.aux_logits = self.aux(h)
        total = F.cross_entropy(self.head(h), y)
        if self.use_aux:
            total = total + 0.3 * F.cross_entropy(self.aux_logits, y)
        return total


model = Model(use_aux=True)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(3):
    loss = model.loss(torch.randn(6, 8), torch.randint(0, 4, (6,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
