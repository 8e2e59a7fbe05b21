"""Hard-example replay through a global that keeps the inputs, re-scored every step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(6, 10), nn.ReLU(), nn.Linear(10, 2))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
hard_inputs = None
hard_labels = None


def train_step(x, y):
    global hard_inputs, hard_labels
    loss = F.cross_entropy(net(x), y)
    if hard_inputs is not None:
        loss = loss + 0.5 * F.cross_entropy(net(hard_inputs), hard_labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    hard_inputs, hard_labels = x, y


for step in range(3):
    train_step(torch.randn(5, 6), torch.randint(0, 2, (5,)))
