# Source: https://github.com/BY571/DQN-Atari-Agents/issues/5
"""DQN-Atari-Agents' `dqn+per` agent with the fix the issue gave (and the repository made): the
weighted squared TD errors are averaged together, `loss = (td_error.pow(2)*weights).mean()`, so
the loss is a scalar. The agent is the repository's (DDQN for 1-d states, PrioritizedReplay with
n_step=1, DQN_Agent) with small sizes and without the TensorBoard writer and the curiosity module;
a random CartPole-sized environment stands in for gym."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.nn.utils import clip_grad_norm_


def weight_init(layers):
    for layer in layers:
        torch.nn.init.kaiming_normal_(layer.weight, nonlinearity='relu')


class DDQN(nn.Module):
    def __init__(self, state_size, action_size, layer_size, n_step, seed):
        super(DDQN, self).__init__()
        self.seed = torch.manual_seed(seed)
        self.input_shape = state_size
        self.action_size = action_size
        self.head_1 = nn.Linear(self.input_shape[0], layer_size)
        self.ff_1 = nn.Linear(layer_size, layer_size)
        self.ff_2 = nn.Linear(layer_size, action_size)
        weight_init([self.head_1, self.ff_1])

    def forward(self, input):
        x = torch.relu(self.head_1(input))
        x = torch.relu(self.ff_1(x))
        return self.ff_2(x)


class PrioritizedReplay(object):
    """Proportional Prioritization"""

    def __init__(self, capacity, batch_size, seed, alpha=0.6, beta_start=0.4, beta_frames=100000):
        self.alpha = alpha
        self.beta_start = beta_start
        self.beta_frames = beta_frames
        self.frame = 1  # for beta calculation
        self.batch_size = batch_size
        self.capacity = capacity
        self.buffer = []
        self.pos = 0
        self.priorities = np.zeros((capacity,), dtype=np.float32)
        self.seed = np.random.seed(seed)

    def beta_by_frame(self, frame_idx):
        return min(1.0, self.beta_start + frame_idx * (1.0 - self.beta_start) / self.beta_frames)

    def add(self, state, action, reward, next_state, done):
        state = np.expand_dims(state, 0)
        next_state = np.expand_dims(next_state, 0)
        max_prio = self.priorities.max() if self.buffer else 1.0
        if len(self.buffer) < self.capacity:
            self.buffer.append((state, action, reward, next_state, done))
        else:
            self.buffer[self.pos] = (state, action, reward, next_state, done)
        self.priorities[self.pos] = max_prio
        self.pos = (self.pos + 1) % self.capacity

    def sample(self):
        N = len(self.buffer)
        if N == self.capacity:
            prios = self.priorities
        else:
            prios = self.priorities[:self.pos]
        probs = prios ** self.alpha
        P = probs / probs.sum()
        indices = np.random.choice(N, self.batch_size, p=P)
        samples = [self.buffer[idx] for idx in indices]
        beta = self.beta_by_frame(self.frame)
        self.frame += 1
        weights = (N * P[indices]) ** (-beta)
        weights /= weights.max()
        weights = np.array(weights, dtype=np.float32)
        states, actions, rewards, next_states, dones = zip(*samples)
        return np.concatenate(states), actions, rewards, np.concatenate(next_states), dones, indices, weights

    def update_priorities(self, batch_indices, batch_priorities):
        for idx, prio in zip(batch_indices, np.ravel(batch_priorities)):
            self.priorities[idx] = prio

    def __len__(self):
        return len(self.buffer)


class DQN_Agent():
    """Interacts with and learns from the environment."""

    def __init__(self, state_size, action_size, layer_size, n_step, BATCH_SIZE, BUFFER_SIZE, LR, TAU, GAMMA,
                 device, seed):
        self.state_size = state_size
        self.action_size = action_size
        self.seed = random.seed(seed)
        self.device = device
        self.TAU = TAU
        self.GAMMA = GAMMA
        self.UPDATE_EVERY = 1
        self.BATCH_SIZE = BATCH_SIZE
        self.Q_updates = 0
        self.n_step = n_step
        self.qnetwork_local = DDQN(state_size, action_size, layer_size, n_step, seed).to(device)
        self.qnetwork_target = DDQN(state_size, action_size, layer_size, n_step, seed).to(device)
        self.optimizer = optim.Adam(self.qnetwork_local.parameters(), lr=LR)
        self.memory = PrioritizedReplay(BUFFER_SIZE, BATCH_SIZE, seed=seed)
        self.t_step = 0

    def step(self, state, action, reward, next_state, done):
        self.memory.add(state, action, reward, next_state, done)
        self.t_step = (self.t_step + 1) % self.UPDATE_EVERY
        if self.t_step == 0:
            if len(self.memory) > self.BATCH_SIZE:
                experiences = self.memory.sample()
                loss = self.learn_per(experiences)
                self.Q_updates += 1
                return loss

    def act(self, state, eps=0.):
        if random.random() > eps:
            state = torch.from_numpy(np.array(state)).float().to(self.device).unsqueeze(0)
            self.qnetwork_local.eval()
            with torch.no_grad():
                action_values = self.qnetwork_local(state)
            self.qnetwork_local.train()
            return int(np.argmax(action_values.cpu().data.numpy(), axis=1)[0])
        return random.choice(np.arange(self.action_size))

    def soft_update(self, local_model, target_model):
        for target_param, local_param in zip(target_model.parameters(), local_model.parameters()):
            target_param.data.copy_(self.TAU * local_param.data + (1.0 - self.TAU) * target_param.data)

    def learn_per(self, experiences):
        self.optimizer.zero_grad()
        states, actions, rewards, next_states, dones, idx, weights = experiences

        states = torch.FloatTensor(states).to(self.device)
        next_states = torch.FloatTensor(np.float32(next_states)).to(self.device)
        actions = torch.LongTensor(actions).to(self.device).unsqueeze(1)
        rewards = torch.FloatTensor(rewards).to(self.device).unsqueeze(1)
        dones = torch.FloatTensor(dones).to(self.device).unsqueeze(1)
        weights = torch.FloatTensor(weights).unsqueeze(1).to(self.device)

        # Get max predicted Q values (for next states) from target model
        Q_targets_next = self.qnetwork_target(next_states).detach().max(1)[0].unsqueeze(1)
        # Compute Q targets for current states
        Q_targets = rewards + (self.GAMMA**self.n_step * Q_targets_next * (1 - dones))
        # Get expected Q values from local model
        Q_expected = self.qnetwork_local(states).gather(1, actions)
        # Compute loss
        td_error = Q_targets - Q_expected
        loss = (td_error.pow(2)*weights).mean().to(self.device)
        # Minimize the loss
        loss.backward()
        clip_grad_norm_(self.qnetwork_local.parameters(), 1)
        self.optimizer.step()

        # ------------------- update target network ------------------- #
        self.soft_update(self.qnetwork_local, self.qnetwork_target)
        # update per priorities
        self.memory.update_priorities(idx, abs(td_error.data.cpu().numpy()))
        return loss.detach().cpu().numpy()


class RandomCartPole:
    """Stands in for gym's CartPole-v0: 4-d observations, 2 actions."""

    def reset(self):
        return np.random.randn(4).astype(np.float32)

    def step(self, action):
        return np.random.randn(4).astype(np.float32), 1.0, bool(np.random.rand() < 0.05), {}


env = RandomCartPole()
agent = DQN_Agent(state_size=(4,), action_size=2, layer_size=32, n_step=1, BATCH_SIZE=8, BUFFER_SIZE=100,
                  LR=1e-3, TAU=1e-3, GAMMA=0.99, device=torch.device("cpu"), seed=0)
state = env.reset()
eps = 1.0
for frame in range(1, 21):
    action = agent.act(state, eps)
    next_state, reward, done, _ = env.step(action)
    agent.step(state, action, reward, next_state, done)
    state = env.reset() if done else next_state
    eps = max(0.05, eps - 0.05)
