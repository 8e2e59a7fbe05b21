# Source: https://github.com/openai/baselines/issues/1064
"""The SubprocVecEnv rollout, fixed (the thread found no way to backprop across the worker
processes; this is the right fix): the environments are not differentiable, so envs.step() gets a
detached numpy copy of the sampled actions, and the policy is trained through the log-probability
of those actions (a score-function / REINFORCE loss) instead of through the rewards. SubprocVecEnv,
the envs and the pipes are in-process stand-ins written here.
"""
import numpy as np
import torch
import torch.nn as nn


class PointEnv:
    """Stand-in for a gym env made by make_env(): 4-d observation, 2-d continuous action."""
    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.state = self.rng.randn(4).astype(np.float32)

    def reset(self):
        self.state = self.rng.randn(4).astype(np.float32)
        return self.state

    def step(self, action):
        action = np.asarray(action, dtype=np.float32)
        self.state = self.state + 0.1 * np.concatenate([action, action])
        reward = -float(np.square(self.state).sum())
        return self.state, reward, False, {}


class CloudpickleWrapper:
    def __init__(self, x):
        self.x = x


def worker(env_fn_wrappers):
    envs = [env_fn_wrapper() for env_fn_wrapper in env_fn_wrappers.x]

    def handle(cmd, data):
        if cmd == 'step':
            return [envs[i].step(data[i]) for i in range(len(envs))]
        if cmd == 'reset':
            return [env.reset() for env in envs]
        raise NotImplementedError
    return handle


class SubprocVecEnv:
    """In-process stand-in for baselines.common.vec_env.SubprocVecEnv (no real subprocesses)."""
    def __init__(self, env_fns, in_series=1):
        self.waiting = False
        self.closed = False
        self.in_series = in_series
        nenvs = len(env_fns)
        self.nremotes = nenvs // in_series
        env_fns = np.array_split(env_fns, self.nremotes)
        self.remotes = [worker(CloudpickleWrapper(env_fn)) for env_fn in env_fns]
        self.num_envs = nenvs
        self._results = None

    def step_async(self, actions):
        actions = np.array_split(actions, self.nremotes)
        self._results = [remote('step', action) for remote, action in zip(self.remotes, actions)]
        self.waiting = True

    def step_wait(self):
        results = [r for chunk in self._results for r in chunk]
        self.waiting = False
        obs, rews, dones, infos = zip(*results)
        return np.stack(obs), np.stack(rews), np.stack(dones), infos

    def step(self, actions):
        self.step_async(actions)
        return self.step_wait()

    def reset(self):
        return np.stack([o for remote in self.remotes for o in remote('reset', None)])


class GaussianPolicy(nn.Module):
    def __init__(self, obs_dim=4, act_dim=2):
        super().__init__()
        self.mu = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, act_dim))
        self.log_std = nn.Parameter(torch.zeros(act_dim))

    def forward(self, obs):
        return torch.distributions.Normal(self.mu(obs), self.log_std.exp())


def make_env(seed):
    return lambda: PointEnv(seed)


envs = SubprocVecEnv([make_env(i) for i in range(4)])
policy = GaussianPolicy()
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)

for update in range(2):
    obs = torch.from_numpy(envs.reset())
    rewards, log_probs = [], []
    for t in range(5):
        dist = policy(obs)
        actions = dist.sample()
        log_probs.append(dist.log_prob(actions).sum(-1))
        obs, rew, done, info = envs.step(actions.detach().cpu().numpy())
        obs = torch.from_numpy(obs)
        rewards.append(torch.as_tensor(rew, dtype=torch.float32))
    returns = torch.stack(rewards).flip(0).cumsum(0).flip(0)
    loss = -(torch.stack(log_probs) * (returns - returns.mean())).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
