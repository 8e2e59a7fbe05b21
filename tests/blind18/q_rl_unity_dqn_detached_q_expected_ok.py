# Source: https://github.com/QasimWani/RL-Unity/issues/2
"""https://github.com/QasimWani/RL-Unity/issues/2
RL-Unity's DQN agent for Unity's Banana environment, fixed as the repository's working agent
(commit fed91ef, agent.py) does: the notebook's `Agent.train` took the predictions from
`self.qnetwork_local(...).detach()[0]`, so the loss had no graph ("element 0 of tensors does not
require grad"). The fixed `train` gathers `Q_expected = self.qnetwork_local(states).gather(1,
actions)` with its graph, takes the targets' max over the actions (`.max(1)[0].unsqueeze(1)`,
masked by `1 - done`), and `soft_update` copies `TAU * local + (1 - TAU) * target` into the target
network's parameters. The unityagents Banana environment is a small stand-in written here (37-d
states, 4 actions, random dynamics); smaller batch and episodes."""
import random
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)
random.seed(0)


class BrainInfo:
    def __init__(self, obs, reward, done):
        self.vector_observations = [obs]
        self.rewards = [reward]
        self.local_done = [done]
        self.agents = [0]


class Brain:
    vector_action_space_size = 4


class UnityEnvironment:
    """Stand-in for unityagents.UnityEnvironment("Banana.app")."""

    def __init__(self, file_name=None, episode_length=40):
        self.brain_names = ["BananaBrain"]
        self.brains = {"BananaBrain": Brain()}
        self.rng = np.random.default_rng(0)
        self.episode_length = episode_length

    def reset(self, train_mode=True):
        self.t = 0
        self.obs = self.rng.normal(size=37)
        return {"BananaBrain": BrainInfo(self.obs, 0.0, False)}

    def step(self, action):
        self.t += 1
        self.obs = 0.9 * self.obs + 0.1 * self.rng.normal(size=37)
        reward = float(self.rng.choice([-1.0, 0.0, 0.0, 1.0]))
        return {"BananaBrain": BrainInfo(self.obs, reward, self.t >= self.episode_length)}


class DQNetwork(nn.Module):
    """
    Defines the feed forward NN used for the DQN Agent.
    inherits nn.modules class.
    """
    def __init__(self, input_features, output_features, dropout_layers=[0.3, 0.1]):
        super().__init__()
        self.state_size = input_features[0]
        self.action_size = output_features[-1]
        self.FC = nn.ModuleList()
        self.Dropout = []
        if(len(input_features) != len(output_features)):
            raise ValueError("lengths do not match. input dimension MUST equal output dimensions")
        if(len(dropout_layers) >= len(input_features) - 1):
            raise ValueError("dropout layers dimensions do not match appropriate size")
        for input_unit, output_unit in zip(input_features, output_features):
            self.FC.append(nn.Linear(input_unit, output_unit, bias=True))
        for prob in dropout_layers:
            self.Dropout.append(nn.Dropout(prob))

    def forward(self, state):
        for i in range(len(self.FC)):
            if(i == 0):
                X = F.relu(self.FC[0](state))
            else:
                X = F.relu(self.FC[i](X)) if (i < len(self.FC) - 1) else self.FC[i](X)
            if(i < len(self.Dropout)):
                X = self.Dropout[i](X)
        return X


class ReplayBuffer():
    """Defines the standard fixed size Experience Replay"""
    def __init__(self, buffer_size, batch_size):
        self.buffer_size = buffer_size
        self.batch_size = batch_size
        self.replay_memory = deque(maxlen=self.buffer_size)

    def add(self, transition):
        self.replay_memory.append(transition)

    def sample(self):
        experiences = random.sample(self.replay_memory, k=self.batch_size)
        states = torch.from_numpy(np.vstack([e[0] for e in experiences if e is not None])).float()
        actions = torch.from_numpy(np.vstack([e[1] for e in experiences if e is not None])).long()
        rewards = torch.from_numpy(np.vstack([e[2] for e in experiences if e is not None])).float()
        next_states = torch.from_numpy(np.vstack([e[3] for e in experiences if e is not None])).float()
        dones = torch.from_numpy(np.vstack([e[4] for e in experiences if e is not None]).astype(np.uint8)).float()
        return (states, actions, rewards, next_states, dones)

    def isSampling(self):
        return self.batch_size < len(self.replay_memory)

    def __len__(self):
        return len(self.replay_memory)


env = UnityEnvironment(file_name="Banana.app")
brain_name = env.brain_names[0]
brain = env.brains[brain_name]
env_info = env.reset(train_mode=True)[brain_name]
action_size = brain.vector_action_space_size
state = env_info.vector_observations[0]
state_size = len(state)

BUFFER_SIZE = int(1e5)  # replay buffer size
BATCH_SIZE = 16         # minibatch size
GAMMA = 0.99            # discount factor
TAU = 1e-3              # for soft update of target parameters
LR = 5e-4               # learning rate
UPDATE_EVERY = 4        # how often to update the network


class Agent():
    """Defines the agent class for DQN using Double Q-learning and Prioritized Experience Replay architecture"""
    def __init__(self, state_size=37, action_size=4, gamma=0.99, lr=0.001, update_every=5):
        self.state_size = state_size
        self.action_size = action_size
        self.input_features = [state_size, 128, 64, 32]
        self.output_features = [128, 64, 32, action_size]
        self.gamma = gamma
        self.qnetwork_local = DQNetwork(self.input_features, self.output_features)
        self.qnetwork_target = DQNetwork(self.input_features, self.output_features)
        self.optimizer = optim.Adam(self.qnetwork_local.parameters(), lr=lr)
        self.memory = ReplayBuffer(BUFFER_SIZE, BATCH_SIZE)
        self.update_every = update_every
        self.target_update_counter = 0

    def step(self, transition):
        self.memory.add(transition)
        self.target_update_counter = (self.target_update_counter + 1) % self.update_every
        if(self.target_update_counter == 0):
            if(len(self.memory) > BATCH_SIZE):
                experiences = self.memory.sample()
                self.train(experiences)

    def get_action(self, state, eps=0.0):
        state = torch.from_numpy(state).float().unsqueeze(0)
        self.qnetwork_local.eval()
        with torch.no_grad():
            action_val = self.qnetwork_local(state)
        self.qnetwork_local.train()
        if(random.random() > eps):
            return np.argmax(action_val.cpu().data.numpy())
        return random.choice(np.arange(self.action_size))

    def train(self, experiences):
        states, actions, rewards, next_states, done = experiences

        Q_targets_next = self.qnetwork_target(next_states).detach().max(1)[0].unsqueeze(1)
        Q_targets = rewards + (self.gamma * Q_targets_next * (1 - done))
        Q_expected = self.qnetwork_local(states).gather(1, actions)
        loss = F.mse_loss(Q_expected, Q_targets)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

        self.soft_update(self.qnetwork_local, self.qnetwork_target)

    def soft_update(self, local_model, target_model):
        for target_param, local_param in zip(target_model.parameters(), local_model.parameters()):
            target_param.data.copy_(TAU*local_param.data + (1.0-TAU)*target_param.data)


agent = Agent()


def get_epsilon_i(num_episode, epsilon_min=0.01, evaluate=True):
    if(evaluate):
        epsilon = max(1/num_episode, epsilon_min)
    return epsilon_min


scores = []
NUM_EPISODES = 3

for epoch in range(1, NUM_EPISODES + 1):
    env_info = env.reset(train_mode=True)[brain_name]
    state = env_info.vector_observations[0]
    score = 0
    i = 0
    while True:
        i += 1
        epsilon = get_epsilon_i(epoch)
        action = agent.get_action(state, epsilon)
        env_info = env.step(action)[brain_name]
        next_state = env_info.vector_observations[0]
        reward = env_info.rewards[0]
        done = env_info.local_done[0]
        transition = (state, action, reward, next_state, done)
        agent.step(transition)
        score += reward
        state = next_state
        if done:
            break
    scores.append(score)
print(scores)
