"""PPO with a dataclass rollout buffer whose old log-probs are stored detached: the epochs of
updates each build their own graph from the current policy."""
from dataclasses import dataclass, field

import torch
import torch.nn as nn


@dataclass
class Rollout:
    states: list = field(default_factory=list)
    actions: list = field(default_factory=list)
    logps: list = field(default_factory=list)
    advantages: list = field(default_factory=list)


policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
buf = Rollout()
for t in range(6):
    s = torch.randn(4)
    dist = torch.distributions.Categorical(logits=policy(s))
    a = dist.sample()
    buf.states.append(s)
    buf.actions.append(a)
    buf.logps.append(dist.log_prob(a).detach())
    buf.advantages.append(float(torch.randn(())))

states, actions = torch.stack(buf.states), torch.stack(buf.actions)
old_logp, adv = torch.stack(buf.logps), torch.tensor(buf.advantages)
for epoch in range(4):
    logp = torch.distributions.Categorical(logits=policy(states)).log_prob(actions)
    ratio = (logp - old_logp).exp()
    loss = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
