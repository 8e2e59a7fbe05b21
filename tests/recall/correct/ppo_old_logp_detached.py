"""PPO whose stored old log-probs are detached when the rollout is stacked."""
import torch
import torch.nn as nn

policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
states, actions, logps = [], [], []
for t in range(6):
    s = torch.randn(4)
    dist = torch.distributions.Categorical(logits=policy(s))
    a = dist.sample()
    states.append(s)
    actions.append(a)
    logps.append(dist.log_prob(a))
states, actions = torch.stack(states), torch.stack(actions)
old_logp = torch.stack(logps).detach()
adv = torch.randn(6)
for epoch in range(4):
    logp = torch.distributions.Categorical(logits=policy(states)).log_prob(actions)
    ratio = (logp - old_logp).exp()
    loss = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
