# Source: https://github.com/QasimWani/RL-Unity/issues/5
"""Fixed twin of q_rl_unity_maddpg_other_agent_predicted_action_bug.py. MADDPG for Unity's Tennis:
`MADDPG.learn` runs both local actors once and hands each agent its own and the other agent's
`predicted_action`; in the bug, agent 2's actor backward goes through agent 1's predicted action,
whose actor agent 1's `actor_optimizer.step()` has just updated in place (GG103). The author gave no
fix in the thread (he went back to a single agent); the right one, applied here: in `Agent.learn`
the other agent's predicted action is a constant of this agent's actor update (`.detach()`), as in
MADDPG, so no graph is walked twice and the `retain_graph=True` flags go. The Unity Tennis
environment is a random stand-in; the networks are smaller.
"""
import copy
import random
from collections import deque, namedtuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

device = torch.device("cpu")

# ----------------------------- model.py -----------------------------


class Actor(nn.Module):
    """Estimates the policy deterministically using tanh activation for continuous action space"""
    def __init__(self, state_size=24, action_size=2, seed=0, fc1=32, fc2=16):
        super(Actor, self).__init__()
        self.seed = torch.manual_seed(seed)
        self.fc1 = nn.Linear(state_size, fc1)
        self.bn1 = nn.BatchNorm1d(fc1)
        self.fc2 = nn.Linear(fc1, fc2)
        self.bn2 = nn.BatchNorm1d(fc2)
        self.fc3 = nn.Linear(fc2, action_size)
        self.reset_parameters()

    def reset_parameters(self):
        f1 = 1./np.sqrt(self.fc1.weight.data.size()[0])
        self.fc1.weight.data.uniform_(-f1, f1)
        self.fc1.bias.data.uniform_(-f1, f1)
        f2 = 1./np.sqrt(self.fc2.weight.data.size()[0])
        self.fc2.weight.data.uniform_(-f2, f2)
        self.fc2.bias.data.uniform_(-f2, f2)
        self.fc3.weight.data.uniform_(-3e-3, 3e-3)

    def forward(self, state):
        x = state
        x = self.fc1(x)
        x = self.bn1(x)
        x = F.relu(x)
        x = self.fc2(x)
        x = self.bn2(x)
        x = F.relu(x)
        x = self.fc3(x)
        mu = torch.tanh(x)
        return mu


class Critic(nn.Module):
    """Value approximator V(pi) as Q(s, a|θ)"""
    def __init__(self, state_size=24, action_size=2, num_agents=2, seed=0, fc1=32, fc2=16):
        super(Critic, self).__init__()
        self.seed = torch.manual_seed(seed)
        self.full_observational_space = (state_size + action_size) * num_agents
        self.fc1 = nn.Linear(self.full_observational_space, fc1)
        self.bn1 = nn.BatchNorm1d(fc1)
        self.fc2 = nn.Linear(fc1, fc2)
        self.bn2 = nn.BatchNorm1d(fc2)
        self.fc3 = nn.Linear(fc2, 1)
        self.reset_parameters()

    def reset_parameters(self):
        f1 = 1./np.sqrt(self.fc1.weight.data.size()[0])
        self.fc1.weight.data.uniform_(-f1, f1)
        self.fc1.bias.data.uniform_(-f1, f1)
        f2 = 1./np.sqrt(self.fc2.weight.data.size()[0])
        self.fc2.weight.data.uniform_(-f2, f2)
        self.fc2.bias.data.uniform_(-f2, f2)
        f3 = 3e-3
        self.fc3.weight.data.uniform_(-f3, f3)
        self.fc3.bias.data.uniform_(-f3, f3)

    def forward(self, complete_state, complete_action):
        self_state, other_state = complete_state
        self_action, other_action = complete_action
        full_observation = torch.cat((self_state, other_state, self_action, other_action), dim=1)
        x = self.fc1(full_observation)
        x = self.bn1(x)
        x = F.relu(x)
        x = self.fc2(x)
        x = self.bn2(x)
        x = F.relu(x)
        value = self.fc3(x)
        return value

# ----------------------------- utils.py -----------------------------


class ReplayBuffer():
    def __init__(self, action_size, buffer_size, batch_size, seed):
        self.seed = random.seed(seed)
        self.action_size = action_size
        self.replay_memory = deque(maxlen=buffer_size)
        self.batch_size = batch_size
        self.experience = namedtuple("Experience", field_names=["state_1", "state_2", "action_1", "action_2", "reward_1", "reward_2", "next_state_1", "next_state_2", "done_1", "done_2"])

    def add(self, state1, state2, action1, action2, reward1, reward2, next_state1, next_state2, done1, done2):
        trajectory = self.experience(state1, state2, action1, action2, reward1, reward2, next_state1, next_state2, done1, done2)
        self.replay_memory.append(trajectory)

    def sample(self):
        experiences = random.sample(self.replay_memory, k=self.batch_size)
        states_1 = torch.from_numpy(np.vstack([e.state_1 for e in experiences if e is not None])).float().to(device)
        actions_1 = torch.from_numpy(np.vstack([e.action_1 for e in experiences if e is not None])).float().to(device)
        rewards_1 = torch.from_numpy(np.vstack([e.reward_1 for e in experiences if e is not None])).float().to(device)
        next_states_1 = torch.from_numpy(np.vstack([e.next_state_1 for e in experiences if e is not None])).float().to(device)
        dones_1 = torch.from_numpy(np.vstack([e.done_1 for e in experiences if e is not None]).astype(np.uint8)).float().to(device)
        states_2 = torch.from_numpy(np.vstack([e.state_2 for e in experiences if e is not None])).float().to(device)
        actions_2 = torch.from_numpy(np.vstack([e.action_2 for e in experiences if e is not None])).float().to(device)
        rewards_2 = torch.from_numpy(np.vstack([e.reward_2 for e in experiences if e is not None])).float().to(device)
        next_states_2 = torch.from_numpy(np.vstack([e.next_state_2 for e in experiences if e is not None])).float().to(device)
        dones_2 = torch.from_numpy(np.vstack([e.done_2 for e in experiences if e is not None]).astype(np.uint8)).float().to(device)
        return states_1, states_2, actions_1, actions_2, rewards_1, rewards_2, next_states_1, next_states_2, dones_1, dones_2

    def __len__(self):
        return len(self.replay_memory)


class OUNoise:
    """Ornstein-Uhlenbeck process."""
    def __init__(self, size, seed, mu=0., theta=0.15, sigma=0.2):
        self.mu = mu * np.ones(size)
        self.theta = theta
        self.sigma = sigma
        self.seed = random.seed(seed)
        self.reset()

    def reset(self):
        self.state = copy.copy(self.mu)

    def sample(self):
        x = self.state
        dx = self.theta * (self.mu - x) + self.sigma * np.array([random.random() for i in range(len(x))])
        self.state = x + dx
        return self.state

# ----------------------------- agent.py -----------------------------


LR_CRITIC = 1e-4
LR_ACTOR = 1e-4
GAMMA = 0.99
WEIGHT_DECAY = 0
TAU = 1e-3


class Agent():
    """Main DDPG agent that extracts experiences and learns from them"""
    def __init__(self, state_size=24, action_size=2, random_seed=0):
        self.state_size = state_size
        self.action_size = action_size
        self.seed = random.seed(random_seed)
        self.actor_local = Actor(self.state_size, self.action_size, random_seed).to(device)
        self.actor_target = Actor(self.state_size, self.action_size, random_seed).to(device)
        self.actor_optimizer = optim.Adam(self.actor_local.parameters(), lr=LR_ACTOR)
        self.critic_local = Critic(self.state_size, self.action_size, seed=random_seed).to(device)
        self.critic_target = Critic(self.state_size, self.action_size, seed=random_seed).to(device)
        self.critic_optimizer = optim.Adam(self.critic_local.parameters(), lr=LR_CRITIC, weight_decay=WEIGHT_DECAY)
        self.noise = OUNoise(action_size, random_seed)

    def act(self, state, add_noise=True):
        state = torch.from_numpy(state).float().unsqueeze(0).to(device)
        self.actor_local.eval()
        with torch.no_grad():
            action = self.actor_local(state).cpu().data.numpy()
        self.actor_local.train()
        if(add_noise):
            action += self.noise.sample()
        return np.clip(action, -1, 1)

    def reset(self):
        self.noise.reset()

    def learn(self, self_, other):
        """
        1. self_: Agent 1 - dict(state, action, reward, next_state, done, next_action, predicted_action)
        2. other: Agent 2 - dict(state, action, reward, next_state, done, next_action, predicted_action)
        """
        with torch.no_grad():
            Q_targets_next = self.critic_target((self_["state"], other["state"]), (self_["action_next"], other["action_next"]))

        Q_targets = self_["reward"] + (GAMMA * Q_targets_next * (1 - self_["done"]))

        Q_expected = self.critic_local((self_["state"], other["state"]), (self_["action"], other["action"]))
        critic_loss = F.mse_loss(Q_expected, Q_targets)

        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()

        actor_loss = -self.critic_local((self_["state"], other["state"]), (self_["predicted_action"], other["predicted_action"].detach())).mean()
        self.actor_optimizer.zero_grad()
        actor_loss.backward()

        self.actor_optimizer.step()

        self.soft_update(self.critic_local, self.critic_target, TAU)
        self.soft_update(self.actor_local, self.actor_target, TAU)

    def soft_update(self, local_model, target_model, tau):
        for target_param, local_param in zip(target_model.parameters(), local_model.parameters()):
            target_param.data.copy_(tau*local_param.data + (1.0-tau)*target_param.data)

# ----------------------------- MADDPG.py -----------------------------


BUFFER_SIZE = int(1e5)
BATCH_SIZE = 16
N_TIME_STEPS = 4


class MADDPG():

    def __init__(self, state_size=24, action_size=2, random_seed=0):
        self.state_size = state_size
        self.action_size = action_size
        self.num_agents = 2
        self.agent1 = Agent(state_size, action_size, random_seed)
        self.agent2 = Agent(state_size, action_size, random_seed)
        self.memory = ReplayBuffer(action_size, BUFFER_SIZE, BATCH_SIZE, random_seed)

    def act(self, states, rand=False):
        if(rand == False):
            action1 = self.agent1.act(states[0])
            action2 = self.agent2.act(states[1])
            return [action1, action2]
        actions = np.random.randn(self.num_agents, self.action_size)
        actions = np.clip(actions, -1, 1)
        return actions

    def step(self, time_step, state, action, reward, next_state, done):
        self.memory.add(state[0], state[1], action[0], action[1], reward[0], reward[1], next_state[0], next_state[1], done[0], done[1])
        if(time_step % N_TIME_STEPS == 0 and len(self.memory) > BATCH_SIZE):
            experience = self.memory.sample()
            self.learn(experience)

    def learn(self, experiences):
        """Train mini-batch from experiences"""
        states1, states2, actions1, actions2, rewards1, rewards2, next_states1, next_states2, dones1, dones2 = experiences

        actions_next1 = self.agent1.actor_target(next_states1)
        actions_next2 = self.agent2.actor_target(next_states2)

        actions_pred1 = self.agent1.actor_local(states1)
        actions_pred2 = self.agent2.actor_local(states2)

        self_ = {"state": states1, "action": actions1, "reward": rewards1, "next_state": next_states1, "done": dones1, "action_next": actions_next1, "predicted_action": actions_pred1}
        other = {"state": states2, "action": actions2, "reward": rewards2, "next_state": next_states2, "done": dones2, "action_next": actions_next2, "predicted_action": actions_pred2}

        self.agent1.learn(self_, other)
        self.agent2.learn(other, self_)

# ----------------------------- Tennis.ipynb -----------------------------


class TennisEnv:
    """Random stand-in for the Unity Tennis environment (2 agents, 24 observations, 2 actions)."""
    num_agents, state_size, action_size = 2, 24, 2

    def reset(self):
        self.t = 0
        return np.random.randn(self.num_agents, self.state_size)

    def step(self, actions):
        self.t += 1
        next_states = np.random.randn(self.num_agents, self.state_size)
        rewards = list(np.random.choice([0.0, 0.1, -0.01], size=self.num_agents))
        dones = [self.t >= 15] * self.num_agents
        return next_states, rewards, dones


np.random.seed(0)
env = TennisEnv()
maddpg = MADDPG(env.state_size, env.action_size, random_seed=0)

time_step = 0
for i_episode in range(1, 4):
    states = env.reset()
    maddpg.agent1.reset()
    maddpg.agent2.reset()
    scores = np.zeros(env.num_agents)
    while True:
        actions = maddpg.act(states, rand=(i_episode == 1))
        actions = np.vstack(actions).reshape(env.num_agents, env.action_size)
        next_states, rewards, dones = env.step(actions)
        time_step += 1
        maddpg.step(time_step, states, actions, rewards, next_states, dones)
        scores += rewards
        states = next_states
        if np.any(dones):
            break
    print("Episode {}\tMax score: {:.3f}".format(i_episode, np.max(scores)))
