# Source: https://github.com/pytorch/pytorch/issues/38480
"""The reporter's `sac_train` loop drives a SAC agent of pranz24's pytorch-soft-actor-critic (the
same [256, 1] TBackward "version 3; expected version 2" error as that repository's issue #31):
`update_parameters` forms qf1/qf2 losses and the policy loss from `critic(state_batch, pi)`
first, then steps the critic optimizer twice (once per Q loss) and only then backwards the policy
loss, which walks the twin-Q network whose weights the two steps changed in place: torch raises
"one of the variables needed for gradient computation has been modified by an inplace
operation". The gym environment and the replay memory are small stand-ins; tiny sizes, CPU.
"""
import random
import time
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal
from torch.optim import Adam

LOG_SIG_MAX = 2
LOG_SIG_MIN = -20
epsilon = 1e-6


# ---- model.py ----
def weights_init_(m):
    if isinstance(m, nn.Linear):
        torch.nn.init.xavier_uniform_(m.weight, gain=1)
        torch.nn.init.constant_(m.bias, 0)


class QNetwork(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_dim):
        super(QNetwork, self).__init__()
        # Q1 architecture
        self.linear1 = nn.Linear(num_inputs + num_actions, hidden_dim)
        self.linear2 = nn.Linear(hidden_dim, hidden_dim)
        self.linear3 = nn.Linear(hidden_dim, 1)
        # Q2 architecture
        self.linear4 = nn.Linear(num_inputs + num_actions, hidden_dim)
        self.linear5 = nn.Linear(hidden_dim, hidden_dim)
        self.linear6 = nn.Linear(hidden_dim, 1)
        self.apply(weights_init_)

    def forward(self, state, action):
        xu = torch.cat([state, action], 1)
        x1 = F.relu(self.linear1(xu))
        x1 = F.relu(self.linear2(x1))
        x1 = self.linear3(x1)
        x2 = F.relu(self.linear4(xu))
        x2 = F.relu(self.linear5(x2))
        x2 = self.linear6(x2)
        return x1, x2


class GaussianPolicy(nn.Module):
    def __init__(self, num_inputs, num_actions, hidden_dim):
        super(GaussianPolicy, self).__init__()
        self.linear1 = nn.Linear(num_inputs, hidden_dim)
        self.linear2 = nn.Linear(hidden_dim, hidden_dim)
        self.mean_linear = nn.Linear(hidden_dim, num_actions)
        self.log_std_linear = nn.Linear(hidden_dim, num_actions)
        self.apply(weights_init_)
        self.action_scale = torch.tensor(1.)
        self.action_bias = torch.tensor(0.)

    def forward(self, state):
        x = F.relu(self.linear1(state))
        x = F.relu(self.linear2(x))
        mean = self.mean_linear(x)
        log_std = self.log_std_linear(x)
        log_std = torch.clamp(log_std, min=LOG_SIG_MIN, max=LOG_SIG_MAX)
        return mean, log_std

    def sample(self, state):
        mean, log_std = self.forward(state)
        std = log_std.exp()
        normal = Normal(mean, std)
        x_t = normal.rsample()
        y_t = torch.tanh(x_t)
        action = y_t * self.action_scale + self.action_bias
        log_prob = normal.log_prob(x_t)
        log_prob -= torch.log(self.action_scale * (1 - y_t.pow(2)) + epsilon)
        log_prob = log_prob.sum(1, keepdim=True)
        mean = torch.tanh(mean) * self.action_scale + self.action_bias
        return action, log_prob, mean


# ---- utils.py ----
def soft_update(target, source, tau):
    for target_param, param in zip(target.parameters(), source.parameters()):
        target_param.data.copy_(target_param.data * (1.0 - tau) + param.data * tau)


def hard_update(target, source):
    for target_param, param in zip(target.parameters(), source.parameters()):
        target_param.data.copy_(param.data)


# ---- sac.py ----
class SAC(object):
    def __init__(self, num_inputs, action_space, args):
        self.gamma = args['gamma']
        self.tau = args['tau']
        self.alpha = args['alpha']
        self.target_update_interval = args['target_update_interval']
        self.device = torch.device("cpu")
        self.critic = QNetwork(num_inputs, action_space.shape[0], args['hidden_size'])
        self.critic_optim = Adam(self.critic.parameters(), lr=args['lr'])
        self.critic_target = QNetwork(num_inputs, action_space.shape[0], args['hidden_size'])
        hard_update(self.critic_target, self.critic)
        self.policy = GaussianPolicy(num_inputs, action_space.shape[0], args['hidden_size'])
        self.policy_optim = Adam(self.policy.parameters(), lr=args['lr'])

    def select_action(self, state, evaluate=False):
        state = torch.FloatTensor(state).unsqueeze(0)
        if evaluate is False:
            action, _, _ = self.policy.sample(state)
        else:
            _, _, action = self.policy.sample(state)
        return action.detach().cpu().numpy()[0]

    def update_parameters(self, memory, batch_size, updates):
        state_batch, action_batch, reward_batch, next_state_batch, mask_batch = memory.sample(batch_size=batch_size)
        state_batch = torch.FloatTensor(state_batch)
        next_state_batch = torch.FloatTensor(next_state_batch)
        action_batch = torch.FloatTensor(action_batch)
        reward_batch = torch.FloatTensor(reward_batch).unsqueeze(1)
        mask_batch = torch.FloatTensor(mask_batch).unsqueeze(1)

        with torch.no_grad():
            next_state_action, next_state_log_pi, _ = self.policy.sample(next_state_batch)
            qf1_next_target, qf2_next_target = self.critic_target(next_state_batch, next_state_action)
            min_qf_next_target = torch.min(qf1_next_target, qf2_next_target) - self.alpha * next_state_log_pi
            next_q_value = reward_batch + mask_batch * self.gamma * (min_qf_next_target)

        qf1, qf2 = self.critic(state_batch, action_batch)
        qf1_loss = F.mse_loss(qf1, next_q_value)
        qf2_loss = F.mse_loss(qf2, next_q_value)

        pi, log_pi, _ = self.policy.sample(state_batch)
        qf1_pi, qf2_pi = self.critic(state_batch, pi)
        min_qf_pi = torch.min(qf1_pi, qf2_pi)
        policy_loss = ((self.alpha * log_pi) - min_qf_pi).mean()

        self.critic_optim.zero_grad()
        qf1_loss.backward()
        self.critic_optim.step()

        self.critic_optim.zero_grad()
        qf2_loss.backward()
        self.critic_optim.step()

        self.policy_optim.zero_grad()
        policy_loss.backward()  # expect: GG103
        self.policy_optim.step()

        if updates % self.target_update_interval == 0:
            soft_update(self.critic_target, self.critic, self.tau)
        return qf1_loss.item(), qf2_loss.item(), policy_loss.item()


# ---- replay_memory.py ----
class ReplayMemory:
    def __init__(self, capacity, seed=0):
        random.seed(seed)
        self.capacity = capacity
        self.buffer = []
        self.position = 0

    def push(self, state, action, reward, next_state, done):
        if len(self.buffer) < self.capacity:
            self.buffer.append(None)
        self.buffer[self.position] = (state, action, reward, next_state, done)
        self.position = (self.position + 1) % self.capacity

    def sample(self, batch_size):
        batch = random.sample(self.buffer, batch_size)
        state, action, reward, next_state, done = map(np.stack, zip(*batch))
        return state, action, reward, next_state, done

    def __len__(self):
        return len(self.buffer)


# ---- gym stand-in ----
class Box:
    def __init__(self, dim):
        self.shape = (dim,)
        self.high = np.ones(dim, dtype=np.float32)

    def sample(self):
        return np.random.uniform(-1, 1, self.shape).astype(np.float32)


class PointEnv:
    observation_space = Box(3)
    action_space = Box(1)
    _max_episode_steps = 15

    def reset(self):
        self.t = 0
        self.s = np.random.randn(3).astype(np.float32)
        return self.s

    def step(self, action):
        self.t += 1
        self.s = (self.s + 0.1 * np.concatenate([action, action, action])).astype(np.float32)
        reward = -float(np.square(self.s).sum())
        return self.s, reward, self.t >= self._max_episode_steps, {}


args = {'gamma': 0.99, 'tau': 0.005, 'alpha': 0.2, 'target_update_interval': 1,
        'hidden_size': 16, 'lr': 3e-4}
env = PointEnv()
agent = SAC(env.observation_space.shape[0], env.action_space, args)
memory = ReplayMemory(1000)
batch_size = 8
start_steps = 10
updates_per_step = 1


def sac_train(max_steps):
    total_numsteps = 0
    updates = 0
    num_episodes = 2
    time_start = time.time()
    scores_deque = deque(maxlen=100)
    scores_array = []
    avg_scores_array = []

    for i_episode in range(num_episodes):
        episode_reward = 0
        episode_steps = 0
        done = False
        state = env.reset()

        for step in range(max_steps):
            if start_steps > total_numsteps:
                action = env.action_space.sample()  # Sample random action
            else:
                action = agent.select_action(state)  # Sample action from policy

            if len(memory) > batch_size:
                # Update parameters of all the networks
                for i in range(updates_per_step):
                    critic_1_loss, critic_2_loss, policy_loss = agent.update_parameters(memory, batch_size, updates)
                    updates += 1

            next_state, reward, done, _ = env.step(action)  # Step
            episode_steps += 1
            total_numsteps += 1
            episode_reward += reward
            mask = 1 if episode_steps == env._max_episode_steps else float(not done)
            memory.push(state, action, reward, next_state, mask)  # Append transition to memory
            state = next_state
            if done:
                break

        scores_deque.append(episode_reward)
        scores_array.append(episode_reward)
        avg_scores_array.append(np.mean(scores_deque))
        print("Episode {}, steps {}, reward {:.2f}, time {:.2f}s".format(
            i_episode, total_numsteps, episode_reward, time.time() - time_start))
    return scores_array, avg_scores_array


scores, avg_scores = sac_train(max_steps=15)
