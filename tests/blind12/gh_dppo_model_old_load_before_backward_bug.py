# Source: https://github.com/alexis-jacq/Pytorch-DPPO/issues/9
"""Pytorch-DPPO's PPO worker: the old policy's outputs come from model_old(batch_states) with
grad enabled (v_pred_old feeds the clipped value loss), and "before step, update old_model" runs
model_old.load_state_dict(model.state_dict()) ahead of total_loss.backward(). load_state_dict
copies into model_old's weights in place, so the backward finds the value head's weight saved by
AddmmBackward at a newer version: "one of the variables needed for gradient computation has been
modified by an inplace operation" (the report's [100, 1] TBackward tensor). The thread has no fix.
gym, torch.multiprocessing, the chief process and its shared buffers are small single-process
stand-ins written here; the report's `retain_variables=True` is spelled retain_graph=True.
"""
import random
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class Model(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super(Model, self).__init__()
        h_size_1 = 16
        h_size_2 = 16
        self.p_fc1 = nn.Linear(num_inputs, h_size_1)
        self.p_fc2 = nn.Linear(h_size_1, h_size_2)
        self.v_fc1 = nn.Linear(num_inputs, h_size_1)
        self.v_fc2 = nn.Linear(h_size_1, h_size_2)
        self.mu = nn.Linear(h_size_2, num_outputs)
        self.log_std = nn.Parameter(torch.zeros(num_outputs))
        self.v = nn.Linear(h_size_2, 1)
        for name, p in self.named_parameters():
            if 'bias' in name:
                p.data.fill_(0)
        self.train()

    def forward(self, inputs):
        x = torch.tanh(self.p_fc1(inputs))
        x = torch.tanh(self.p_fc2(x))
        mu = self.mu(x)
        log_std = torch.exp(self.log_std).unsqueeze(0).expand_as(mu)
        x = torch.tanh(self.v_fc1(inputs))
        x = torch.tanh(self.v_fc2(x))
        v = self.v(x)
        return mu, log_std, v


class Shared_grad_buffers():
    def __init__(self, model):
        self.grads = {}
        for name, p in model.named_parameters():
            self.grads[name + '_grad'] = torch.zeros(p.size())

    def add_gradient(self, model):
        for name, p in model.named_parameters():
            self.grads[name + '_grad'] += p.grad.data

    def reset(self):
        for name, grad in self.grads.items():
            self.grads[name].fill_(0)


class Shared_obs_stats():
    def __init__(self, num_inputs):
        self.n = torch.zeros(num_inputs)
        self.mean = torch.zeros(num_inputs)
        self.mean_diff = torch.zeros(num_inputs)
        self.var = torch.zeros(num_inputs)

    def observes(self, obs):
        x = obs.data.squeeze()
        self.n += 1.
        last_mean = self.mean.clone()
        self.mean += (x - self.mean) / self.n
        self.mean_diff += (x - last_mean) * (x - self.mean)
        self.var = torch.clamp(self.mean_diff / self.n, min=1e-2)

    def normalize(self, inputs):
        obs_mean = Variable(self.mean.unsqueeze(0).expand_as(inputs))
        obs_std = Variable(torch.sqrt(self.var).unsqueeze(0).expand_as(inputs))
        return torch.clamp((inputs - obs_mean) / obs_std, -5., 5.)


class ReplayMemory(object):
    def __init__(self, capacity):
        self.capacity = capacity
        self.memory = []

    def push(self, events):
        for event in zip(*events):
            self.memory.append(event)
            if len(self.memory) > self.capacity:
                del self.memory[0]

    def clear(self):
        self.memory = []

    def sample(self, batch_size):
        samples = zip(*random.sample(self.memory, batch_size))
        return map(lambda x: torch.cat(x, 0), samples)


class PendulumStandIn:
    """Stand-in for gym.make(params.env_name): 3-d observation, 1-d action."""
    def reset(self):
        self.t = 0
        return np.random.randn(3).astype(np.float32)

    def step(self, action):
        self.t += 1
        return np.random.randn(3).astype(np.float32), float(-np.abs(action).sum()), self.t >= 8, {}


def normal(x, mu, std):
    a = (-1 * (x - mu).pow(2) / (2 * std)).exp()
    b = 1 / (2 * std * np.pi).sqrt()
    return a * b


def train(params, shared_model, optimizer, shared_grad_buffers, shared_obs_stats):
    env = PendulumStandIn()
    num_inputs, num_outputs = 3, 1
    model = Model(num_inputs, num_outputs)
    memory = ReplayMemory(params.exploration_size)
    state = Variable(torch.Tensor(env.reset()).unsqueeze(0))
    episode_length = 0
    for update in range(params.num_updates):
        episode_length += 1
        model.load_state_dict(shared_model.state_dict())
        w = -1
        while w < params.exploration_size:
            states, actions, rewards, values, returns, advantages = [], [], [], [], [], []
            for step in range(params.num_steps):
                w += 1
                shared_obs_stats.observes(state)
                state = shared_obs_stats.normalize(state)
                states.append(state)
                mu, sigma_sq, v = model(state)
                eps = torch.randn(mu.size())
                action = (mu + sigma_sq.sqrt() * Variable(eps))
                actions.append(action)
                values.append(v)
                env_action = action.data.squeeze().numpy()
                state, reward, done, _ = env.step(env_action)
                done = (done or episode_length >= params.max_episode_length)
                reward = max(min(reward, 1), -1)
                rewards.append(reward)
                if done:
                    episode_length = 0
                    state = env.reset()
                state = Variable(torch.Tensor(state).unsqueeze(0))
                if done:
                    break
            R = torch.zeros(1, 1)
            if not done:
                _, _, v = model(state)
                R = v.data
            values.append(Variable(R))
            A = Variable(torch.zeros(1, 1))
            for i in reversed(range(len(rewards))):
                td = rewards[i] + params.gamma * values[i + 1].data[0, 0] - values[i].data[0, 0]
                A = float(td) + params.gamma * params.gae_param * A
                advantages.insert(0, A)
                R = A + values[i].data
                returns.insert(0, R)
            memory.push([[s.detach() for s in states], [a.detach() for a in actions], returns, advantages])

        model_old = Model(num_inputs, num_outputs)
        model_old.load_state_dict(model.state_dict())
        for k in range(params.num_epoch):
            model.load_state_dict(shared_model.state_dict())
            model.zero_grad()
            batch_states, batch_actions, batch_returns, batch_advantages = memory.sample(params.batch_size)
            # old probas
            mu_old, sigma_sq_old, v_pred_old = model_old(batch_states.detach())
            probs_old = normal(batch_actions, mu_old, sigma_sq_old)
            # new probas
            mu, sigma_sq, v_pred = model(batch_states)
            probs = normal(batch_actions, mu, sigma_sq)
            ratio = probs / (1e-10 + probs_old)
            surr1 = ratio * torch.cat([batch_advantages] * num_outputs, 1)
            surr2 = ratio.clamp(1 - params.clip, 1 + params.clip) * torch.cat([batch_advantages] * num_outputs, 1)
            loss_clip = -torch.mean(torch.min(surr1, surr2))
            vfloss1 = (v_pred - batch_returns) ** 2
            v_pred_clipped = v_pred_old + (v_pred - v_pred_old).clamp(-params.clip, params.clip)
            vfloss2 = (v_pred_clipped - batch_returns) ** 2
            loss_value = 0.5 * torch.mean(torch.max(vfloss1, vfloss2))
            loss_ent = -params.ent_coeff * torch.mean(probs * torch.log(probs + 1e-5))
            total_loss = (loss_clip + loss_value + loss_ent)
            # before step, update old_model:
            model_old.load_state_dict(model.state_dict())
            # prepare for step
            total_loss.backward(retain_graph=True)  # expect: GG103
            shared_grad_buffers.add_gradient(model)
            # the chief's part: apply the summed gradients to the shared model
            for name, p in shared_model.named_parameters():
                p._grad = shared_grad_buffers.grads[name + '_grad'].clone()
            optimizer.step()
            shared_grad_buffers.reset()
        memory.clear()


params = SimpleNamespace(exploration_size=16, num_steps=8, max_episode_length=50, gamma=0.99,
                         gae_param=0.95, num_epoch=3, batch_size=8, clip=0.2, ent_coeff=0.0,
                         num_updates=2, lr=1e-3)
shared_model = Model(3, 1)
optimizer = torch.optim.Adam(shared_model.parameters(), lr=params.lr)
train(params, shared_model, optimizer, Shared_grad_buffers(shared_model), Shared_obs_stats(3))
