"""An agent's update helper backwards the value loss and then the policy loss; both come from one
shared feature pass."""
import torch
import torch.nn as nn


class Agent:
    def __init__(self):
        self.body = nn.Linear(4, 8)
        self.actor = nn.Linear(8, 2)
        self.critic = nn.Linear(8, 1)
        self.opt = torch.optim.Adam([*self.body.parameters(), *self.actor.parameters(),
                                     *self.critic.parameters()], lr=1e-3)

    def update(self, loss):
        self.opt.zero_grad()
        loss.backward()  # expect: GG101
        self.opt.step()

    def learn(self, obs, ret):
        feat = torch.relu(self.body(obs))
        value_loss = (self.critic(feat).squeeze(1) - ret).pow(2).mean()
        policy_loss = -torch.log_softmax(self.actor(feat), 1)[:, 0].mean()
        self.update(value_loss)
        self.update(policy_loss)


agent = Agent()
agent.learn(torch.randn(5, 4), torch.randn(5))
