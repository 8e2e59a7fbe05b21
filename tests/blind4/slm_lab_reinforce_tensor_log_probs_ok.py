# Source: https://github.com/kengz/SLM-Lab/pull/133
"""SLM-Lab's REINFORCE with the PR's fix: calc_policy_loss gathers the saved log-probabilities with
`torch.stack(self.body.log_probs)`, which keeps them in the graph, so the policy loss can be
backwarded into the policy net. The algorithm, body, net and on-policy memory follow SLM-Lab's
classes in small form; an environment of random 4-dim states with two actions stands in for
CartPole."""
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical


class MLPNet(nn.Module):
    def __init__(self, in_dim, out_dim, hid_layers=(16,), lr=0.01, clip_grad_val=0.5):
        super().__init__()
        dims = [in_dim, *hid_layers]
        layers = []
        for d_in, d_out in zip(dims[:-1], dims[1:]):
            layers += [nn.Linear(d_in, d_out), nn.SELU()]
        self.model = nn.Sequential(*layers, nn.Linear(dims[-1], out_dim))
        self.optim = torch.optim.Adam(self.parameters(), lr=lr)
        self.clip_grad_val = clip_grad_val

    def forward(self, x):
        return self.model(x)

    def training_step(self, loss):
        self.optim.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.parameters(), self.clip_grad_val)
        self.optim.step()
        return loss


class Body:
    def __init__(self, state_dim, action_dim):
        self.state_dim = state_dim
        self.action_dim = action_dim
        self.log_probs = []


class OnPolicyReplay:
    def __init__(self):
        self.reset()

    def reset(self):
        self.rewards = []
        self.dones = []

    def update(self, reward, done):
        self.rewards.append(reward)
        self.dones.append(done)

    def sample(self):
        batch = {'rewards': np.array(self.rewards), 'dones': np.array(self.dones)}
        self.reset()
        return batch


class Reinforce:
    def __init__(self, body, gamma=0.99, policy_loss_coef=1.0):
        self.body = body
        self.gamma = gamma
        self.policy_loss_coef = policy_loss_coef
        self.net = MLPNet(body.state_dim, body.action_dim)
        self.memory = OnPolicyReplay()

    def act(self, state):
        pdparam = self.net(torch.from_numpy(state).float())
        action_pd = Categorical(logits=pdparam)
        action = action_pd.sample()
        self.body.log_probs.append(action_pd.log_prob(action))
        return action.item()

    def calc_returns(self, batch):
        rewards, dones = batch['rewards'], batch['dones']
        rets = np.zeros_like(rewards, dtype=np.float32)
        future_ret = 0.0
        for t in reversed(range(len(rewards))):
            future_ret = rewards[t] + self.gamma * future_ret * (1 - dones[t])
            rets[t] = future_ret
        rets = (rets - rets.mean()) / (rets.std() + 1e-8)
        return torch.from_numpy(rets)

    def calc_policy_loss(self, batch):
        advs = self.calc_returns(batch)
        log_probs = torch.stack(self.body.log_probs)
        policy_loss = - self.policy_loss_coef * (log_probs * advs).mean()
        return policy_loss

    def train(self):
        batch = self.memory.sample()
        loss = self.calc_policy_loss(batch)
        self.net.training_step(loss=loss)
        self.body.log_probs = []
        return loss.item()


class RandomEnv:
    """Stands in for CartPole: random 4-dim states, reward 1 per step, episodes of 10 steps."""

    def reset(self):
        self.t = 0
        return np.random.randn(4)

    def step(self, action):
        self.t += 1
        return np.random.randn(4), 1.0, self.t >= 10


env = RandomEnv()
agent = Reinforce(Body(state_dim=4, action_dim=2))
for episode in range(3):
    state = env.reset()
    done = False
    while not done:
        action = agent.act(state)
        state, reward, done = env.step(action)
        agent.memory.update(reward, done)
    agent.train()
