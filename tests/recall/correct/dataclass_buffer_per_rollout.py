"""A REINFORCE learner whose episode buffer is a dataclass with list fields made by
default_factory: each episode starts a new buffer, so the log-probs (which keep their graphs on
purpose) are walked once, by that episode's update."""
from dataclasses import dataclass, field

import torch
import torch.nn as nn


@dataclass
class Episode:
    logps: list = field(default_factory=list)
    rewards: list = field(default_factory=list)
    gamma: float = 0.99


policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
for episode in range(3):
    ep = Episode()
    for t in range(5):
        dist = torch.distributions.Categorical(logits=policy(torch.randn(4)))
        a = dist.sample()
        ep.logps.append(dist.log_prob(a))
        ep.rewards.append(float(a))
    ret = sum(r * ep.gamma ** k for k, r in enumerate(ep.rewards))
    loss = -ret * torch.stack(ep.logps).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
