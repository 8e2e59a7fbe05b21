# Source: https://github.com/thu-ml/tianshou/issues/29
"""tianshou 0.2.1's DDPGPolicy with a Softmax-ended Actor, fixed (the thread shows no fix; this is
the right one, as later tianshou releases write it): DDPGPolicy.forward adds the action bias and
the exploration noise out of place (`logits = logits + self._action_bias`), so the Softmax's saved
output is left intact for the actor loss's backward. tianshou's Batch, replay buffer and the gym
env are small stand-ins written here.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from copy import deepcopy


class Batch:
    """Stand-in for tianshou.data.Batch."""
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


class Actor(nn.Module):
    def __init__(self, layer_num, state_shape, action_shape, max_action, device='cpu'):
        super().__init__()
        self.device = device
        self.model = [nn.Linear(np.prod(state_shape), 32), nn.ReLU(inplace=True)]
        for i in range(layer_num):
            self.model += [nn.Linear(32, 32), nn.ReLU(inplace=True)]
        self.model = nn.Sequential(*self.model)
        self.last = nn.Linear(32, np.prod(action_shape))
        self.softmax = nn.Softmax(dim=-1)
        self._max = max_action

    def forward(self, s, **kwargs):
        s = torch.tensor(s, device=self.device, dtype=torch.float)
        batch = s.shape[0]
        s = s.view(batch, -1)
        logits = self.model(s)
        logits = self.softmax(self.last(logits))
        return logits, None


class Critic(nn.Module):
    def __init__(self, layer_num, state_shape, action_shape=0, device='cpu'):
        super().__init__()
        self.device = device
        self.model = [nn.Linear(np.prod(state_shape) + np.prod(action_shape), 32), nn.ReLU(inplace=True)]
        for i in range(layer_num):
            self.model += [nn.Linear(32, 32), nn.ReLU(inplace=True)]
        self.model += [nn.Linear(32, 1)]
        self.model = nn.Sequential(*self.model)

    def forward(self, s, a=None):
        s = torch.tensor(s, device=self.device, dtype=torch.float)
        batch = s.shape[0]
        s = s.view(batch, -1)
        if a is not None:
            if not isinstance(a, torch.Tensor):
                a = torch.tensor(a, device=self.device, dtype=torch.float)
            a = a.view(batch, -1)
            s = torch.cat([s, a], dim=1)
        return self.model(s)


class DDPGPolicy(nn.Module):
    def __init__(self, actor, actor_optim, critic, critic_optim, tau=0.005, gamma=0.99,
                 exploration_noise=0.1, action_range=None, reward_normalization=False,
                 ignore_done=False, **kwargs):
        super().__init__()
        if actor is not None:
            self.actor, self.actor_old = actor, deepcopy(actor)
            self.actor_old.eval()
            self.actor_optim = actor_optim
        if critic is not None:
            self.critic, self.critic_old = critic, deepcopy(critic)
            self.critic_old.eval()
            self.critic_optim = critic_optim
        self._tau = tau
        self._gamma = gamma
        self._eps = exploration_noise
        self._range = action_range
        self._action_bias = (action_range[0] + action_range[1]) / 2
        self._action_scale = (action_range[1] - action_range[0]) / 2
        self._rew_norm = reward_normalization
        self.__eps = np.finfo(np.float32).eps.item()

    def sync_weight(self):
        for o, n in zip(self.actor_old.parameters(), self.actor.parameters()):
            o.data.copy_(o.data * (1 - self._tau) + n.data * self._tau)
        for o, n in zip(self.critic_old.parameters(), self.critic.parameters()):
            o.data.copy_(o.data * (1 - self._tau) + n.data * self._tau)

    def forward(self, batch, state=None, model='actor', input='obs', eps=None, **kwargs):
        model = getattr(self, model)
        obs = getattr(batch, input)
        logits, h = model(obs, state=state, info=getattr(batch, 'info', None))
        logits = logits + self._action_bias
        if eps is None:
            eps = self._eps
        if eps > 0:
            logits = logits + torch.randn(size=logits.shape, device=logits.device) * eps
        logits = logits.clamp(self._range[0], self._range[1])
        return Batch(act=logits, state=h)

    def learn(self, batch, batch_size=None, repeat=1):
        target_q = self.critic_old(batch.obs_next, self(
            batch, model='actor_old', input='obs_next', eps=0).act)
        dev = target_q.device
        rew = torch.tensor(batch.rew, dtype=torch.float, device=dev)[:, None]
        done = torch.tensor(batch.done, dtype=torch.float, device=dev)[:, None]
        target_q = (rew + (1. - done) * self._gamma * target_q).detach()
        current_q = self.critic(batch.obs, batch.act)
        critic_loss = F.mse_loss(current_q, target_q)
        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()
        actor_loss = -self.critic(batch.obs, self(batch, eps=0).act).mean()
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()
        self.sync_weight()
        return {'loss/actor': actor_loss.item(), 'loss/critic': critic_loss.item()}


class ReplayBuffer:
    """Stand-in for tianshou.data.ReplayBuffer filled by a collector: random Pendulum-like data."""
    def __init__(self, state_dim, action_dim):
        self.state_dim, self.action_dim = state_dim, action_dim

    def sample(self, batch_size):
        return Batch(obs=np.random.randn(batch_size, self.state_dim),
                     act=np.random.uniform(-2, 2, (batch_size, self.action_dim)),
                     rew=np.random.randn(batch_size),
                     done=np.zeros(batch_size),
                     obs_next=np.random.randn(batch_size, self.state_dim),
                     info={})


state_shape, action_shape, max_action = (3,), (2,), 2.
actor = Actor(1, state_shape, action_shape, max_action)
actor_optim = torch.optim.Adam(actor.parameters(), lr=1e-4)
critic = Critic(1, state_shape, action_shape)
critic_optim = torch.optim.Adam(critic.parameters(), lr=1e-3)
policy = DDPGPolicy(actor, actor_optim, critic, critic_optim, tau=0.005, gamma=0.9,
                    exploration_noise=0.1, action_range=[-max_action, max_action + 1.])
buffer = ReplayBuffer(3, 2)
for step in range(3):
    losses = policy.learn(buffer.sample(8))
