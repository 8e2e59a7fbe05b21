# Source: https://github.com/sweetice/Deep-reinforcement-learning-with-pytorch/issues/37
"""sweetice's REINFORCE_with_Baseline.py with the right fix (the thread gives none that works):
after the rollout, the episode's value and policy losses are summed (the baseline detached in the
policy term), one backward fills both networks' grads, their norms are clipped on the parameters,
and the value and policy optimizers step once; no retained graph outlives a step."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from copy import deepcopy
from torch.distributions import Categorical
from torch.nn.utils import clip_grad_norm_

render = False


class Discrete:
    def __init__(self, n):
        self.n = n


class Box:
    def __init__(self, shape):
        self.shape = shape


class CartPoleStandIn:
    """Stand-in for gym's CartPole-v0: 4 observations, 2 actions, episodes of 5 steps."""

    def __init__(self):
        self.observation_space = Box((4,))
        self.action_space = Discrete(2)
        self.t = 0

    def seed(self, seed):
        torch.manual_seed(seed)

    def reset(self):
        self.t = 0
        return torch.randn(4).numpy()

    def step(self, action):
        self.t += 1
        return torch.randn(4).numpy(), 1.0, self.t >= 5, {}


class Policy(nn.Module):
    def __init__(self, n_states, n_hidden, n_output):
        super(Policy, self).__init__()
        self.linear1 = nn.Linear(n_states, n_hidden)
        self.linear2 = nn.Linear(n_hidden, n_output)
        self.reward = []
        self.log_act_probs = []
        self.Gt = []
        self.sigma = []

    def forward(self, x):
        x = F.relu(self.linear1(x))
        output = F.softmax(self.linear2(x), dim=1)
        return output


env = CartPoleStandIn()
n_states = env.observation_space.shape[0]
n_actions = env.action_space.n

policy = Policy(n_states, 128, n_actions)
s_value_func = Policy(n_states, 128, 1)

alpha_theta = 1e-3
optimizer_theta = optim.Adam(policy.parameters(), lr=alpha_theta)
alpha_w = 1e-3
optimizer_w = optim.Adam(s_value_func.parameters(), lr=alpha_w)
gamma = 0.99

seed = 1
env.seed(seed)
live_time = []


def loop_episode():
    state = env.reset()
    state_sequence = []
    log_act_prob = []
    for t in range(1000):
        state = torch.from_numpy(state).unsqueeze(0).float()
        state_sequence.append(deepcopy(state))
        action_probs = policy(state)
        m = Categorical(action_probs)
        action = m.sample()
        m_log_prob = m.log_prob(action)
        log_act_prob.append(m_log_prob)
        action = action.item()
        next_state, re, done, _ = env.step(action)
        policy.reward.append(re)
        if done:
            live_time.append(t)
            break
        state = next_state

    R = 0
    Gt = []
    for r in policy.reward[::-1]:
        R = r + gamma * R
        Gt.insert(0, R)

    # one update per episode
    optimizer_w.zero_grad()
    optimizer_theta.zero_grad()
    value_loss = 0
    policy_loss = 0
    for i in range(len(Gt)):
        G = Gt[i]
        V = s_value_func(state_sequence[i])
        delta = G - V
        value_loss = value_loss + delta.pow(2).sum()
        policy_loss = policy_loss - (log_act_prob[i] * delta.detach()).sum()
    (value_loss + policy_loss).backward()
    clip_grad_norm_(s_value_func.parameters(), 0.1)
    clip_grad_norm_(policy.parameters(), 0.1)
    optimizer_w.step()
    optimizer_theta.step()

    del policy.log_act_probs[:]
    del policy.reward[:]


def plot(live_time):
    pass


if __name__ == '__main__':
    for i_episode in range(2):
        loop_episode()
        plot(live_time)
