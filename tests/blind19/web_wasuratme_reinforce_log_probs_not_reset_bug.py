# Source: https://github.com/wasuratme96/Deep-Reinforcement-Learning
"""REINFORCE on CartPole whose policy never clears its per-episode ``log_probs`` buffer.

The notebook's policy ``Pi`` stores the ``log_prob`` of every sampled action in
``self.log_probs`` (and rewards in ``self.rewards``); ``train`` stacks them,
builds ``-log_probs * returns`` and calls ``loss.backward()``, and the main loop
then calls ``pi.onpolicy_reset()`` ("clear memory after training").  This
version trains the same way but drops that reset.  After the first episode's
``backward()`` the graphs behind the stored ``log_prob`` tensors are freed; the
second episode's loss still stacks them, so its ``backward()`` walks into those
freed graphs and raises "Trying to backward through the graph a second time".

Fix: call ``pi.onpolicy_reset()`` after every ``train`` so each episode's loss
only contains that episode's log-probabilities (as the notebook does).  A small
numpy CartPole stands in for ``gym.make('CartPole-v0')``.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions import Categorical

torch.manual_seed(0)
gamma = 0.99


class CartPole:
    """Minimal CartPole-v0 dynamics (same equations and limits as gym's)."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, size=4)
        return self.state.copy()

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = 10.0 if action == 1 else -10.0
        cos, sin = math.cos(theta), math.sin(theta)
        temp = (force + 0.05 * theta_dot ** 2 * sin) / 1.1
        theta_acc = (9.8 * sin - cos * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cos ** 2 / 1.1))
        x_acc = temp - 0.05 * theta_acc * cos / 1.1
        x, x_dot = x + 0.02 * x_dot, x_dot + 0.02 * x_acc
        theta, theta_dot = theta + 0.02 * theta_dot, theta_dot + 0.02 * theta_acc
        self.state = np.array([x, x_dot, theta, theta_dot])
        done = abs(x) > 2.4 or abs(theta) > 12 * 2 * math.pi / 360
        return self.state.copy(), 1.0, done, {}


class Pi(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(in_dim, 64), nn.ReLU(), nn.Linear(64, out_dim))
        self.onpolicy_reset()
        self.train()

    def onpolicy_reset(self):
        self.log_probs = []
        self.rewards = []

    def forward(self, x):
        return self.model(x)

    def act(self, state):
        x = torch.from_numpy(state.astype(np.float32))
        pd = Categorical(logits=self.forward(x))
        action = pd.sample()
        self.log_probs.append(pd.log_prob(action))
        return action.item()


def train(pi, optimizer):
    T = len(pi.rewards)
    rets = np.empty(T, dtype=np.float32)
    future_ret = 0.0
    for t in reversed(range(T)):
        future_ret = pi.rewards[t] + gamma * future_ret
        rets[t] = future_ret
    rets = torch.tensor(rets)
    log_probs = torch.stack(pi.log_probs)
    loss = torch.sum(-log_probs * rets)
    optimizer.zero_grad()
    loss.backward()  # expect: GG101
    optimizer.step()
    return loss


env = CartPole()
pi = Pi(4, 2)
optimizer = optim.Adam(pi.parameters(), lr=0.01)

for epi in range(5):
    state = env.reset()
    for t in range(200):
        action = pi.act(state)
        state, reward, done, _ = env.step(action)
        pi.rewards.append(reward)
        if done:
            break
    loss = train(pi, optimizer)
    total_reward = sum(pi.rewards)
    print(f"Episode {epi}, loss: {loss.item():.2f}, total_reward: {total_reward}")
