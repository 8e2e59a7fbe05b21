"""Soft actor-critic agent that turns its learnable log-temperature into alpha once, in __init__,
and uses that alpha in every actor update."""
import torch
import torch.nn as nn


class SACAgent:
    def __init__(self, obs_dim=3, act_dim=1):
        self.actor = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU(), nn.Linear(16, 2 * act_dim))
        self.critic = nn.Sequential(nn.Linear(obs_dim + act_dim, 16), nn.ReLU(), nn.Linear(16, 1))
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha = self.log_alpha.exp()
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=3e-4)
        self.target_entropy = -float(act_dim)

    def sample(self, obs):
        mu, log_std = self.actor(obs).chunk(2, dim=-1)
        dist = torch.distributions.Normal(mu, log_std.clamp(-5, 2).exp())
        u = dist.rsample()
        action = torch.tanh(u)
        logp = dist.log_prob(u).sum(-1) - torch.log(1 - action.pow(2) + 1e-6).sum(-1)
        return action, logp

    def update_actor(self, obs):
        action, logp = self.sample(obs)
        q = self.critic(torch.cat([obs, action], dim=-1)).squeeze(-1)
        actor_loss = (self.alpha * logp - q).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()  # expect: GG101
        self.actor_opt.step()
        alpha_loss = -(self.log_alpha * (logp.detach() + self.target_entropy)).mean()
        self.alpha_opt.zero_grad()
        alpha_loss.backward()
        self.alpha_opt.step()


agent = SACAgent()
for step in range(3):
    agent.update_actor(torch.randn(5, 3))
