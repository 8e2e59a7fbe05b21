"""Policy gradient on a point-mass environment class: actions from dist.sample() drive the state,
which persists across updates (sample() is not differentiable, so it carries no graph)."""
import torch
import torch.nn as nn


class PointMass:
    def __init__(self):
        self.pos = torch.zeros(2)

    def step(self, action):
        self.pos = self.pos + 0.1 * action.clamp(-1, 1)
        return self.pos, -float(self.pos.norm())


mean_net = nn.Linear(2, 2)
log_std = nn.Parameter(torch.zeros(2))
opt = torch.optim.Adam([*mean_net.parameters(), log_std], lr=1e-3)
env = PointMass()
obs = env.pos
for update in range(3):
    dist = torch.distributions.Normal(mean_net(obs), log_std.exp())
    action = dist.sample()
    obs, reward = env.step(action)
    loss = -dist.log_prob(action).sum() * reward
    opt.zero_grad()
    loss.backward()
    opt.step()
