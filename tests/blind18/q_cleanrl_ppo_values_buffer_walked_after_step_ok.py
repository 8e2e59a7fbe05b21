# Source: https://github.com/vwxyzjn/cleanrl/commit/5a3a092564a9fcf2cb748ca2ad23007989567f2e
"""https://github.com/vwxyzjn/cleanrl/commit/5a3a092564a9fcf2cb748ca2ad23007989567f2e
CleanRL's early ppo_continuous_action.py, fixed as the commit "PPO # fix the retain_graph=True"
does: the rollout filled the `values` buffer with grad on and each update epoch backwarded the
value loss through that rollout graph again (kept by `retain_graph=True`), after
`optimizer.step()` had rewritten the critic's weights it saved. The fix runs the rollout's critic
and policy under `torch.no_grad()`, recomputes `newvalues = vf.forward(obs[:step+1]).flatten()`
in every epoch and calls `total_loss.backward()` without `retain_graph`. gym/pybullet
(HopperBulletEnv), cleanrl.common and the SummaryWriter are small stand-ins written here (random
dynamics, nothing written to disk)."""
import argparse
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions.normal import Normal


class Box:
    def __init__(self, low, high, shape):
        self.low, self.high, self.shape = np.full(shape, low), np.full(shape, high), shape

    def seed(self, s):
        pass


class TimeLimit:
    def __init__(self, env, max_episode_steps):
        self.env = env
        self._max_episode_steps = max_episode_steps
        self.observation_space, self.action_space = env.observation_space, env.action_space
        self._t = 0

    def seed(self, s):
        self.env.seed(s)

    def reset(self):
        self._t = 0
        return self.env.reset()

    def step(self, a):
        self._t += 1
        obs, r, d, info = self.env.step(a)
        return obs, r, d or self._t >= self._max_episode_steps, info

    def close(self):
        pass


class HopperStandIn:
    """Stand-in for pybullet's HopperBulletEnv-v0: 15-d observations, 3-d actions, random dynamics."""

    def __init__(self):
        self.observation_space = Box(-np.inf, np.inf, (15,))
        self.action_space = Box(-1.0, 1.0, (3,))
        self.rng = np.random.default_rng(0)

    def seed(self, s):
        self.rng = np.random.default_rng(s)

    def reset(self):
        self.state = self.rng.normal(size=15)
        return self.state

    def step(self, a):
        self.state = 0.9 * self.state + 0.1 * self.rng.normal(size=15)
        return self.state, float(1.0 - np.square(a).sum()), bool(self.rng.random() < 0.02), {}


class gym:
    @staticmethod
    def make(gym_id):
        return TimeLimit(HopperStandIn(), max_episode_steps=16)


class SummaryWriter:
    """Stand-in for torch.utils.tensorboard.SummaryWriter: keeps the scalars in memory."""

    def __init__(self, log_dir=None):
        self.scalars = []

    def add_text(self, tag, text):
        pass

    def add_scalar(self, tag, value, step):
        self.scalars.append((tag, value, step))

    def close(self):
        pass


def preprocess_obs_space(obs_space, device):
    return int(np.prod(obs_space.shape)), lambda x: torch.Tensor(x).float().view(torch.Tensor(x).shape[0], -1).to(device)


def preprocess_ac_space(ac_space):
    return int(np.prod(ac_space.shape))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description='PPO agent')
    parser.add_argument('--exp-name', type=str, default="ppo_continuous_action")
    parser.add_argument('--gym-id', type=str, default="HopperBulletEnv-v0")
    parser.add_argument('--learning-rate', type=float, default=7e-4)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--episode-length', type=int, default=0)
    parser.add_argument('--total-timesteps', type=int, default=48)
    parser.add_argument('--no-torch-deterministic', action='store_false', dest="torch_deterministic", default=True)
    parser.add_argument('--gamma', type=float, default=0.99)
    parser.add_argument('--vf-coef', type=float, default=0.25)
    parser.add_argument('--max-grad-norm', type=float, default=0.5)
    parser.add_argument('--ent-coef', type=float, default=0.01)
    parser.add_argument('--clip-coef', type=float, default=0.2)
    parser.add_argument('--update-epochs', type=int, default=3)
    args = parser.parse_args([])
    if not args.seed:
        args.seed = int(time.time())

experiment_name = f"{args.gym_id}__{args.exp_name}__{args.seed}__{int(time.time())}"
writer = SummaryWriter(f"runs/{experiment_name}")

device = torch.device('cpu')
env = gym.make(args.gym_id)
random.seed(args.seed)
np.random.seed(args.seed)
torch.manual_seed(args.seed)
env.seed(args.seed)
env.action_space.seed(args.seed)
env.observation_space.seed(args.seed)
input_shape, preprocess_obs_fn = preprocess_obs_space(env.observation_space, device)
output_shape = preprocess_ac_space(env.action_space)
assert isinstance(env, TimeLimit) or int(args.episode_length)
if isinstance(env, TimeLimit):
    if int(args.episode_length):
        env._max_episode_steps = int(args.episode_length)
    args.episode_length = env._max_episode_steps
else:
    env = TimeLimit(env, int(args.episode_length))


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.fc1 = nn.Linear(input_shape, 120)
        self.fc2 = nn.Linear(120, 84)
        self.mean = nn.Linear(84, output_shape)
        self.logstd = nn.Parameter(torch.zeros(1, output_shape))

    def forward(self, x):
        x = preprocess_obs_fn(x)
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        action_mean = self.mean(x)
        action_logstd = self.logstd.expand_as(action_mean)
        return action_mean, action_logstd

    def get_action(self, x):
        mean, logstd = self.forward(x)
        std = torch.exp(logstd)
        probs = Normal(mean, std)
        action = probs.sample()
        return action, probs.log_prob(action).sum(1)

    def get_logproba(self, x, actions):
        action_mean, action_logstd = self.forward(x)
        action_std = torch.exp(action_logstd)
        dist = Normal(action_mean, action_std)
        return dist.log_prob(actions).sum(1)


class Value(nn.Module):
    def __init__(self):
        super(Value, self).__init__()
        self.fc1 = nn.Linear(input_shape, 64)
        self.fc2 = nn.Linear(64, 1)

    def forward(self, x):
        x = preprocess_obs_fn(x)
        x = torch.tanh(self.fc1(x))
        x = self.fc2(x)
        return x


pg = Policy().to(device)
vf = Value().to(device)
optimizer = optim.Adam(list(pg.parameters()) + list(vf.parameters()), lr=args.learning_rate)
loss_fn = nn.MSELoss()

global_step = 0
while global_step < args.total_timesteps:
    next_obs = np.array(env.reset())
    actions = np.empty((args.episode_length,) + env.action_space.shape)
    rewards, dones = np.zeros((2, args.episode_length))
    obs = np.empty((args.episode_length,) + env.observation_space.shape)

    values = torch.zeros((args.episode_length), device=device)
    logprobs = np.zeros((args.episode_length,),)
    entropys = torch.zeros((args.episode_length,), device=device)

    for step in range(args.episode_length):
        global_step += 1
        obs[step] = next_obs.copy()

        with torch.no_grad():
            values[step] = vf.forward(obs[step:step+1])
            action, logproba = pg.get_action(obs[step:step+1])
        actions[step] = action.data.numpy()[0]
        logprobs[step] = logproba.data.numpy()[0]

        clipped_action = np.clip(action.tolist(), env.action_space.low, env.action_space.high)[0]

        next_obs, rewards[step], dones[step], _ = env.step(clipped_action)
        next_obs = np.array(next_obs)
        if dones[step]:
            break

    returns = np.zeros_like(rewards)
    returns[step] = rewards[step]
    for t in reversed(range(rewards.shape[0]-1)):
        returns[t] = rewards[t] + args.gamma * returns[t+1] * (1-dones[t])
    advantages = returns - values.detach().cpu().numpy()

    for _ in range(args.update_epochs):
        newlogproba = pg.get_logproba(obs[:step+1], torch.Tensor(actions[:step+1]))
        newvalues = vf.forward(obs[:step+1]).flatten()
        ratio = torch.exp(newlogproba - torch.Tensor(logprobs[:step+1]))
        surrogate1 = ratio * torch.Tensor(advantages[:step+1])
        surrogate2 = ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef) * torch.Tensor(advantages[:step+1])
        policy_loss = - torch.mean(torch.min(surrogate1, surrogate2))
        vf_loss = torch.mean((newvalues - torch.Tensor(returns[:step+1])).pow(2))
        entropy_loss = torch.mean(torch.exp(newlogproba) * newlogproba)
        total_loss = policy_loss + args.vf_coef * vf_loss + args.ent_coef * entropy_loss
        optimizer.zero_grad()
        total_loss.backward()
        nn.utils.clip_grad_norm_(list(pg.parameters()) + list(vf.parameters()), args.max_grad_norm)
        optimizer.step()

    print(f"global_step={global_step}, episode_reward={rewards.sum()}")
    writer.add_scalar("charts/episode_reward", rewards.sum(), global_step)
    writer.add_scalar("losses/value_loss", vf_loss.item(), global_step)
    writer.add_scalar("losses/entropy", entropys[:step+1].mean().item(), global_step)
    writer.add_scalar("losses/policy_loss", policy_loss.item(), global_step)
env.close()
writer.close()
