# Source: https://devgem.vercel.app/posts/how-to-fix-the-runtimeerror-trying-to-backward-through-the-graph-a-second-time-error-in-proximal-policy-optimization-ppo
"""The post "How to Fix the 'RuntimeError: Trying to backward through the graph a second time'
Error in Proximal Policy Optimization (PPO)": the PPO agent evaluates its rollout once and runs
K update epochs on that evaluation; the first error (backward through the graph a second time)
was "fixed" with retain_graph=True, which "may lead to another error related to inplace
operations": the optimizer step of the first epoch writes the actor's weights in place, and the
second epoch's backward needs the weights the retained graph saved."""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self, state_dim, action_dim, hidden=32):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(state_dim, hidden), nn.Tanh(),
                                   nn.Linear(hidden, action_dim), nn.Softmax(dim=-1))
        self.critic = nn.Sequential(nn.Linear(state_dim, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def evaluate(self, states, actions):
        dist = Categorical(self.actor(states))
        return dist.log_prob(actions), self.critic(states).squeeze(-1), dist.entropy()


class PPO:
    def __init__(self, state_dim, action_dim, lr=3e-3, eps_clip=0.2, K_epochs=4):
        self.policy = ActorCritic(state_dim, action_dim)
        self.optimizer = optim.Adam(self.policy.parameters(), lr=lr)
        self.eps_clip, self.K_epochs = eps_clip, K_epochs

    def update(self, states, actions, old_logprobs, returns):
        logprobs, values, entropy = self.policy.evaluate(states, actions)
        for _ in range(self.K_epochs):
            ratios = torch.exp(logprobs - old_logprobs)
            advantages = returns - values.detach()
            surr1 = ratios * advantages
            surr2 = torch.clamp(ratios, 1 - self.eps_clip, 1 + self.eps_clip) * advantages
            loss = -torch.min(surr1, surr2) + 0.5 * (values - returns) ** 2 - 0.01 * entropy
            self.optimizer.zero_grad()
            loss.mean().backward(retain_graph=True)  # expect: GG103
            self.optimizer.step()


def rollout(agent, steps=16, state_dim=4):
    states = torch.randn(steps, state_dim)
    with torch.no_grad():
        dist = Categorical(agent.policy.actor(states))
        actions = dist.sample()
        old_logprobs = dist.log_prob(actions)
    rewards = torch.randn(steps)
    returns = torch.flip(torch.cumsum(torch.flip(rewards, [0]), 0), [0])
    return states, actions, old_logprobs, returns


agent = PPO(state_dim=4, action_dim=2)
for episode in range(2):
    agent.update(*rollout(agent))
    print("episode", episode, "done")
