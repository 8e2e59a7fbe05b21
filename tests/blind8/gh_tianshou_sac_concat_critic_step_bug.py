# Source: https://github.com/thu-ml/tianshou/issues/37
"""Tianshou's SACPolicy.learn as it stood when the issue was filed (torch 1.5.0): to save a
forward, each critic scores the replay actions and the policy's fresh actions in one
concatenated batch, split into current_q (critic loss) and current_qa (actor loss). Both critics
are stepped before actor_loss.backward(), which then needs the critics' last-layer weights
("[128, 1], output 0 of TBackward") that the critic steps have changed. The networks are the
test suite's ActorProb/Critic (128 hidden units); the replay buffer is random transitions and
tianshou's Batch a small namespace."""
from copy import deepcopy

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Batch:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


class ActorProb(nn.Module):
    def __init__(self, layer_num, state_shape, action_shape, max_action, device='cpu'):
        super().__init__()
        self.device = device
        self.model = [nn.Linear(np.prod(state_shape), 128), nn.ReLU(inplace=True)]
        for i in range(layer_num):
            self.model += [nn.Linear(128, 128), nn.ReLU(inplace=True)]
        self.model = nn.Sequential(*self.model)
        self.mu = nn.Linear(128, np.prod(action_shape))
        self.sigma = nn.Parameter(torch.zeros(np.prod(action_shape), 1))
        self._max = max_action

    def forward(self, s, **kwargs):
        if not isinstance(s, torch.Tensor):
            s = torch.tensor(s, device=self.device, dtype=torch.float)
        batch = s.shape[0]
        s = s.view(batch, -1)
        logits = self.model(s)
        mu = self.mu(logits)
        shape = [1] * len(mu.shape)
        shape[1] = -1
        sigma = (self.sigma.view(shape) + torch.zeros_like(mu)).exp()
        return (mu, sigma), None


class Critic(nn.Module):
    def __init__(self, layer_num, state_shape, action_shape=0, device='cpu'):
        super().__init__()
        self.device = device
        self.model = [nn.Linear(np.prod(state_shape) + np.prod(action_shape), 128),
                      nn.ReLU(inplace=True)]
        for i in range(layer_num):
            self.model += [nn.Linear(128, 128), nn.ReLU(inplace=True)]
        self.model += [nn.Linear(128, 1)]
        self.model = nn.Sequential(*self.model)

    def forward(self, s, a=None):
        if not isinstance(s, torch.Tensor):
            s = torch.tensor(s, device=self.device, dtype=torch.float)
        if a is not None and not isinstance(a, torch.Tensor):
            a = torch.tensor(a, device=self.device, dtype=torch.float)
        batch = s.shape[0]
        s = s.view(batch, -1)
        if a is not None:
            a = a.view(batch, -1)
            s = torch.cat([s, a], dim=1)
        return self.model(s)


class SACPolicy(nn.Module):
    def __init__(self, actor, actor_optim, critic1, critic1_optim, critic2, critic2_optim,
                 tau=0.005, gamma=0.99, alpha=0.2, action_range=None):
        super().__init__()
        self.actor, self.actor_optim = actor, actor_optim
        self.critic1, self.critic1_old = critic1, deepcopy(critic1)
        self.critic1_old.eval()
        self.critic1_optim = critic1_optim
        self.critic2, self.critic2_old = critic2, deepcopy(critic2)
        self.critic2_old.eval()
        self.critic2_optim = critic2_optim
        self._tau, self._gamma, self._alpha = tau, gamma, alpha
        self._range = action_range
        self._action_bias = (action_range[0] + action_range[1]) / 2
        self._action_scale = (action_range[1] - action_range[0]) / 2
        self.__eps = np.finfo(np.float32).eps.item()

    def sync_weight(self):
        for o, n in zip(self.critic1_old.parameters(), self.critic1.parameters()):
            o.data.copy_(o.data * (1 - self._tau) + n.data * self._tau)
        for o, n in zip(self.critic2_old.parameters(), self.critic2.parameters()):
            o.data.copy_(o.data * (1 - self._tau) + n.data * self._tau)

    def forward(self, batch, state=None, input='obs', **kwargs):
        obs = getattr(batch, input)
        logits, h = self.actor(obs, state=state)
        dist = torch.distributions.Normal(*logits)
        x = dist.rsample()
        y = torch.tanh(x)
        act = y * self._action_scale + self._action_bias
        log_prob = dist.log_prob(x) - torch.log(self._action_scale * (1 - y.pow(2)) + self.__eps)
        act = act.clamp(self._range[0], self._range[1])
        return Batch(logits=logits, act=act, state=h, dist=dist, log_prob=log_prob)

    def learn(self, batch, **kwargs):
        with torch.no_grad():
            obs_next_result = self(batch, input='obs_next')
            a_ = obs_next_result.act
            dev = a_.device
            batch.act = torch.tensor(batch.act, dtype=torch.float, device=dev)
            target_q = torch.min(
                self.critic1_old(batch.obs_next, a_),
                self.critic2_old(batch.obs_next, a_),
            ) - self._alpha * obs_next_result.log_prob
            rew = torch.tensor(batch.rew, dtype=torch.float, device=dev)[:, None]
            done = torch.tensor(batch.done, dtype=torch.float, device=dev)[:, None]
            target_q = (rew + (1. - done) * self._gamma * target_q)
        obs_result = self(batch)
        a = obs_result.act
        current_q1, current_q1a = self.critic1(
            np.concatenate([batch.obs, batch.obs]), torch.cat([batch.act, a])
        ).split(batch.obs.shape[0])
        current_q2, current_q2a = self.critic2(
            np.concatenate([batch.obs, batch.obs]), torch.cat([batch.act, a])
        ).split(batch.obs.shape[0])
        actor_loss = (self._alpha * obs_result.log_prob - torch.min(
            current_q1a, current_q2a)).mean()
        # critic 1
        critic1_loss = F.mse_loss(current_q1, target_q)
        self.critic1_optim.zero_grad()
        critic1_loss.backward(retain_graph=True)
        self.critic1_optim.step()
        # critic 2
        critic2_loss = F.mse_loss(current_q2, target_q)
        self.critic2_optim.zero_grad()
        critic2_loss.backward(retain_graph=True)
        self.critic2_optim.step()
        # actor
        self.actor_optim.zero_grad()
        actor_loss.backward()  # expect: GG103
        self.actor_optim.step()
        self.sync_weight()
        return {
            'loss/actor': actor_loss.item(),
            'loss/critic1': critic1_loss.item(),
            'loss/critic2': critic2_loss.item(),
        }


def sample(batch_size, state_shape, action_shape):
    """Random transitions standing in for the replay buffer."""
    return Batch(obs=np.random.randn(batch_size, *state_shape).astype(np.float32),
                 act=np.random.uniform(-1, 1, (batch_size, *action_shape)).astype(np.float32),
                 rew=np.random.randn(batch_size).astype(np.float32),
                 done=np.zeros(batch_size, dtype=np.float32),
                 obs_next=np.random.randn(batch_size, *state_shape).astype(np.float32))


state_shape, action_shape = (3,), (1,)
actor = ActorProb(1, state_shape, action_shape, 1.0)
actor_optim = torch.optim.Adam(actor.parameters(), lr=3e-4)
critic1 = Critic(1, state_shape, action_shape)
critic1_optim = torch.optim.Adam(critic1.parameters(), lr=1e-3)
critic2 = Critic(1, state_shape, action_shape)
critic2_optim = torch.optim.Adam(critic2.parameters(), lr=1e-3)
policy = SACPolicy(actor, actor_optim, critic1, critic1_optim, critic2, critic2_optim,
                   action_range=[-1.0, 1.0])

for step in range(3):
    losses = policy.learn(sample(16, state_shape, action_shape))
    print(step, losses)
