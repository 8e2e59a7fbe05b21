"""Script-level helper functions sharing a global: evaluate() stores the best batch's features in
a global for "hard example replay", and train_step() adds a loss on them to later steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(6, 10), nn.ReLU(), nn.Linear(10, 2))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
hard_logits = None
hard_labels = None


def train_step(x, y):
    global hard_logits, hard_labels
    logits = net(x)
    loss = F.cross_entropy(logits, y)
    if hard_logits is not None:
        loss = loss + 0.5 * F.cross_entropy(hard_logits, hard_labels)
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
    hard_logits, hard_labels = logits, y


for step in range(3):
    train_step(torch.randn(5, 6), torch.randint(0, 2, (5,)))
