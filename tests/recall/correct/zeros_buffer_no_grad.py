"""Rollout buffers made with torch.zeros and filled in place under no_grad, reused for 3 epochs."""
import torch
import torch.nn as nn

steps = 6
critic = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
obs = torch.zeros(steps, 3)
values = torch.zeros(steps)
rewards = torch.zeros(steps)
state = torch.randn(3)
for t in range(steps):
    obs[t] = state
    with torch.no_grad():
        values[t] = critic(state).squeeze()
    rewards[t] = -state.pow(2).sum()
    state = state * 0.9 + 0.1 * torch.randn(3)
returns = rewards.flip(0).cumsum(0).flip(0)
for epoch in range(3):
    v = critic(obs).squeeze(1)
    loss = (v - returns).pow(2).mean() + 0.0 * (returns - values).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
