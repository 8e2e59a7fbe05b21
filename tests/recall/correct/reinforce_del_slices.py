"""REINFORCE agent that empties its episode lists in place with del ...[:] after each update."""
import torch
import torch.nn as nn


class Reinforce:
    def __init__(self):
        self.policy = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2), nn.Softmax(-1))
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=1e-2)
        self.log_probs, self.rewards = [], []

    def act(self, state):
        dist = torch.distributions.Categorical(self.policy(state))
        a = dist.sample()
        self.log_probs.append(dist.log_prob(a))
        return a.item()

    def finish(self, gamma=0.9):
        returns = torch.tensor([sum(gamma ** k * r for k, r in enumerate(self.rewards[t:]))
                                for t in range(len(self.rewards))])
        loss = -(torch.stack(self.log_probs) * returns).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        del self.log_probs[:]
        del self.rewards[:]


agent = Reinforce()
for episode in range(2):
    s = torch.zeros(3)
    for t in range(4):
        s = s + (0.5 if agent.act(s) else -0.5)
        agent.rewards.append(1.0 - float(s.abs().mean()))
    agent.finish()
