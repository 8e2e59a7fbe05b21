"""pytorch/examples-style actor-critic with SavedAction namedtuples on the policy, both lists
cleared after each update."""
from collections import namedtuple

import torch
import torch.nn as nn

Saved = namedtuple("Saved", ["log_prob", "value"])


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.pi = nn.Linear(8, 2)
        self.v = nn.Linear(8, 1)
        self.saved = []
        self.rewards = []

    def forward(self, x):
        h = torch.relu(self.body(x))
        return torch.softmax(self.pi(h), -1), self.v(h)


policy = Policy()
opt = torch.optim.Adam(policy.parameters(), lr=3e-2)
for episode in range(3):
    for t in range(4):
        probs, value = policy(torch.randn(1, 4))
        m = torch.distributions.Categorical(probs)
        a = m.sample()
        policy.saved.append(Saved(m.log_prob(a), value))
        policy.rewards.append(1.0)
    losses = []
    for (log_prob, value), r in zip(policy.saved, policy.rewards):
        adv = r - value.item()
        losses.append(-log_prob * adv + (value - r).pow(2).sum())
    opt.zero_grad()
    torch.stack(losses).sum().backward()
    opt.step()
    del policy.rewards[:]
    del policy.saved[:]
