"""REINFORCE agent class whose episode lists are filled by act() and turned into a loss by
finish(); finish() computes the returns with a comprehension and never empties the lists."""
import torch
import torch.nn as nn


class Reinforce:
    def __init__(self, gamma=0.9):
        self.policy = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2), nn.Softmax(-1))
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=1e-2)
        self.gamma = gamma
        self.log_probs = []
        self.rewards = []

    def act(self, state):
        dist = torch.distributions.Categorical(self.policy(state))
        a = dist.sample()
        self.log_probs.append(dist.log_prob(a))
        return a.item()

    def finish(self):
        n = len(self.rewards)
        returns = torch.tensor([sum(self.gamma ** k * r for k, r in enumerate(self.rewards[t:]))
                                for t in range(n)])
        loss = -(torch.stack(self.log_probs) * returns).sum()
        self.opt.zero_grad()
        loss.backward()  # expect: GG101
        self.opt.step()


agent = Reinforce()
for episode in range(2):
    s = torch.zeros(3)
    for t in range(4):
        a = agent.act(s)
        s = s + (0.5 if a else -0.5)
        agent.rewards.append(1.0 - float(s.abs().mean()))
    agent.finish()
