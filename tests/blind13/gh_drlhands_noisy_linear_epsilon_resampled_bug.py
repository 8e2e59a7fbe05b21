# Source: https://github.com/PacktPublishing/Deep-Reinforcement-Learning-Hands-On-Second-Edition/issues/21
"""Deep RL Hands-On (2nd ed.), chapter 10 stock trading: the reader replaces the last two Linear
layers of DQNConv1D (value and advantage heads) with lib/models.py's NoisyLinear, whose forward
resamples its noise buffer in place (`self.epsilon_weight.normal_()`) and uses it in
`self.sigma_weight * self.epsilon_weight`, which saves the buffer. calc_loss runs `net` twice
(on the states, then on the next states for the double-DQN action choice), so the second forward
overwrites the noise the first one saved, and loss_v.backward() raises "one of the variables
needed for gradient computation has been modified by an inplace operation" (the report: a
[3, 512] tensor at version 10005, expected 10004). ptan, ignite and the StocksEnv data are small
stand-ins written here; the networks are the book's, shrunk (numpy `copy=False`
calls spelled np.asarray for NumPy 2).
"""
import math
import random
import collections

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class NoisyLinear(nn.Linear):
    def __init__(self, in_features, out_features, sigma_init=0.017, bias=True):
        super(NoisyLinear, self).__init__(in_features, out_features, bias=bias)
        self.sigma_weight = nn.Parameter(torch.full((out_features, in_features), sigma_init))
        self.register_buffer("epsilon_weight", torch.zeros(out_features, in_features))
        if bias:
            self.sigma_bias = nn.Parameter(torch.full((out_features,), sigma_init))
            self.register_buffer("epsilon_bias", torch.zeros(out_features))
        self.reset_parameters()

    def reset_parameters(self):
        std = math.sqrt(3 / self.in_features)
        self.weight.data.uniform_(-std, std)
        self.bias.data.uniform_(-std, std)

    def forward(self, input):
        self.epsilon_weight.normal_()
        bias = self.bias
        if bias is not None:
            self.epsilon_bias.normal_()
            bias = bias + self.sigma_bias * self.epsilon_bias
        return F.linear(input, self.weight + self.sigma_weight * self.epsilon_weight, bias)


class DQNConv1D(nn.Module):
    def __init__(self, shape, actions_n, hidden=32):
        super(DQNConv1D, self).__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(shape[0], 16, 5), nn.ReLU(),
            nn.Conv1d(16, 16, 5), nn.ReLU(),
        )
        out_size = self._get_conv_out(shape)
        self.fc_val = nn.Sequential(nn.Linear(out_size, hidden), nn.ReLU(), NoisyLinear(hidden, 1))
        self.fc_adv = nn.Sequential(nn.Linear(out_size, hidden), nn.ReLU(), NoisyLinear(hidden, actions_n))

    def _get_conv_out(self, shape):
        o = self.conv(torch.zeros(1, *shape))
        return int(np.prod(o.size()))

    def forward(self, x):
        conv_out = self.conv(x).view(x.size()[0], -1)
        val = self.fc_val(conv_out)
        adv = self.fc_adv(conv_out)
        return val + (adv - adv.mean(dim=1, keepdim=True))


Experience = collections.namedtuple('Experience', ['state', 'action', 'reward', 'last_state'])


class ExperienceReplayBuffer:
    """Stand-in for ptan.experience.ExperienceReplayBuffer over a random StocksEnv."""
    def __init__(self, shape, actions_n, capacity=1000):
        self.shape, self.actions_n = shape, actions_n
        self.buffer = collections.deque(maxlen=capacity)

    def populate(self, n):
        for _ in range(n):
            state = np.random.randn(*self.shape).astype(np.float32)
            last = None if random.random() < 0.1 else np.random.randn(*self.shape).astype(np.float32)
            self.buffer.append(Experience(state, random.randrange(self.actions_n), random.random(), last))

    def sample(self, batch_size):
        return random.sample(list(self.buffer), batch_size)


def unpack_batch(batch):
    states, actions, rewards, dones, last_states = [], [], [], [], []
    for exp in batch:
        state = np.asarray(exp.state)
        states.append(state)
        actions.append(exp.action)
        rewards.append(exp.reward)
        dones.append(exp.last_state is None)
        if exp.last_state is None:
            last_states.append(state)
        else:
            last_states.append(np.asarray(exp.last_state))
    return np.asarray(states), np.array(actions), np.array(rewards, dtype=np.float32), \
        np.array(dones, dtype=np.uint8), np.asarray(last_states)


def calc_loss(batch, net, tgt_net, gamma, device="cpu"):
    states, actions, rewards, dones, next_states = unpack_batch(batch)
    states_v = torch.tensor(states).to(device)
    next_states_v = torch.tensor(next_states).to(device)
    actions_v = torch.tensor(actions).to(device)
    rewards_v = torch.tensor(rewards).to(device)
    done_mask = torch.BoolTensor(dones).to(device)

    state_action_values = net(states_v).gather(1, actions_v.unsqueeze(-1)).squeeze(-1)
    next_state_actions = net(next_states_v).max(1)[1]
    next_state_values = tgt_net(next_states_v).gather(1, next_state_actions.unsqueeze(-1)).squeeze(-1)
    next_state_values[done_mask] = 0.0

    expected_state_action_values = next_state_values.detach() * gamma + rewards_v
    return nn.MSELoss()(state_action_values, expected_state_action_values)


def batch_generator(buffer, initial, batch_size):
    buffer.populate(initial)
    while True:
        buffer.populate(1)
        yield buffer.sample(batch_size)


class TargetNet:
    """Stand-in for ptan.agent.TargetNet."""
    def __init__(self, model):
        self.model = model
        self.target_model = DQNConv1D(SHAPE, ACTIONS)
        self.sync()

    def sync(self):
        self.target_model.load_state_dict(self.model.state_dict())


SHAPE, ACTIONS = (4, 12), 3
BATCH_SIZE, GAMMA, LR = 8, 0.99, 1e-4

net = DQNConv1D(SHAPE, ACTIONS)
tgt_net = TargetNet(net)
buffer = ExperienceReplayBuffer(SHAPE, ACTIONS)
optimizer = torch.optim.Adam(net.parameters(), lr=LR)


def process_batch(batch):
    optimizer.zero_grad()
    loss_v = calc_loss(batch, net, tgt_net.target_model, gamma=GAMMA)
    loss_v.backward()  # expect: GG103
    optimizer.step()
    return {"loss": loss_v.item()}


for iteration, batch in enumerate(batch_generator(buffer, 16, BATCH_SIZE)):
    process_batch(batch)
    if iteration % 2 == 0:
        tgt_net.sync()
    if iteration >= 3:
        break
