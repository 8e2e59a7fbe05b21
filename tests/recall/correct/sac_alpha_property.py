"""SAC agent whose temperature is a property recomputed from the log-temperature at every use."""
import torch
import torch.nn as nn


class SACAgent:
    def __init__(self):
        self.actor = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2))
        self.critic = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=3e-4)

    @property
    def alpha(self):
        return self.log_alpha.exp()

    def update(self, obs):
        mu, log_std = self.actor(obs).chunk(2, dim=-1)
        dist = torch.distributions.Normal(mu, log_std.clamp(-5, 2).exp())
        u = dist.rsample()
        action = torch.tanh(u)
        logp = dist.log_prob(u).sum(-1) - torch.log(1 - action.pow(2) + 1e-6).sum(-1)
        q = self.critic(torch.cat([obs, action], dim=-1)).squeeze(-1)
        actor_loss = (self.alpha.detach() * logp - q).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
        alpha_loss = -(self.log_alpha * (logp.detach() - 1.0)).mean()
        self.alpha_opt.zero_grad()
        alpha_loss.backward()
        self.alpha_opt.step()


agent = SACAgent()
for step in range(3):
    agent.update(torch.randn(5, 3))
