# Source: https://github.com/pytorch/examples/issues/151
"""reinforcement_learning/reinforce.py changed as the reporter describes: "to store experience of
policy gradient, I will call finish_episode() more than once to random sample some experiences".
The episode's (log-prob, return) pairs go to a memory, and each finish_episode() backwards a
random batch of up to 32 of them; with a memory still smaller than that, the second call draws
the same log-probs again, whose graphs the first call freed. A toy environment replaces gym's
CartPole."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

gamma = 0.99
batch_size = 32
random.seed(0)


class ToyEnv:
    def reset(self):
        self.t = 0
        return np.random.randn(4).astype(np.float32)

    def step(self, action):
        self.t += 1
        return np.random.randn(4).astype(np.float32), 1.0, self.t >= 10, {}


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 16)
        self.affine2 = nn.Linear(16, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


env = ToyEnv()
policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
eps = np.finfo(np.float32).eps.item()
memory = []


def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def store_episode():
    R = 0
    returns = []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    memory.extend(zip(policy.saved_log_probs, returns))
    del policy.rewards[:]
    del policy.saved_log_probs[:]


def finish_episode():
    batch = random.sample(memory, min(len(memory), batch_size))
    policy_loss = []
    for log_prob, R in batch:
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()  # expect: GG101
    optimizer.step()


for i_episode in range(2):
    state, ep_reward = env.reset(), 0
    for t in range(1, 100):
        action = select_action(state)
        state, reward, done, _ = env.step(action)
        policy.rewards.append(reward)
        ep_reward += reward
        if done:
            break
    store_episode()
    for update in range(2):
        finish_episode()
    print('Episode {}\tLast reward: {:.2f}'.format(i_episode, ep_reward))
