# Source: https://github.com/kashif/firedup/issues/11
"""firedup (kashif/firedup, a PyTorch port of Spinning Up), fireup/algos/ddpg/ddpg.py before commit
b658ae5 ("fix loss update order"), which closed the issue.

At the end of each episode `ddpg()` runs `ep_len` updates. Each update computes
`_, q, q_pi = main(obs1, acts)` once, builds both losses from it (`pi_loss = -q_pi.mean()`,
`q_loss = F.mse_loss(q, backup)`), then does the Q update (`q_loss.backward()`,
`q_optimizer.step()`) and only afterwards `pi_loss.backward()`. `q_pi` was computed by the Q MLP
on `(obs, pi(obs))`, and its Linear layers saved their weights to send the gradient back to the
policy's action; `q_optimizer.step()` changed them in place, so `pi_loss.backward()` raises "one
of the variables needed for gradient computation has been modified by an inplace operation:
[torch.FloatTensor [300, 1]], which is output 0 of TBackward0, is at version 2; expected version
1" (torch >= 1.5; the issue was on 1.6).

Fix (in the _ok twin, as in the commit): compute the policy loss after the Q update, from a new
forward `_, _, q_pi = main(obs1, acts)`, and log `.item()`s instead of loss tensors.

Stand-ins: a tiny point-mass environment instead of gym, a list-based EpochLogger, small hidden
sizes and step counts, no checkpoint saving; `ReplayBuffer`, `core.MLP`, `core.ActorCritic` and
the `ddpg()` loop keep the repository's code.
"""
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


# ---- stand-ins for gym and fireup.utils.logx ----
class Box:
    def __init__(self, low, high, shape, rng):
        self.low, self.high, self.shape, self.rng = np.full(shape, low), np.full(shape, high), shape, rng

    def sample(self):
        return self.rng.uniform(self.low, self.high).astype(np.float32)


class PointEnv:
    def __init__(self, seed=0):
        self.rng = np.random.RandomState(seed)
        self.observation_space = Box(-np.inf, np.inf, (3,), self.rng)
        self.action_space = Box(-1.0, 1.0, (2,), self.rng)

    def reset(self):
        self.s = self.rng.randn(3).astype(np.float32)
        return self.s

    def step(self, a):
        self.s = (self.s + 0.1 * np.concatenate([a, [0.0]])).astype(np.float32)
        return self.s, -float(np.sum(self.s ** 2)), False, {}


class EpochLogger:
    def __init__(self):
        self.epoch_dict = {}

    def store(self, **kwargs):
        for k, v in kwargs.items():
            self.epoch_dict.setdefault(k, []).append(v)


# ---- fireup/algos/ddpg/core.py ----
def count_vars(module):
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


class MLP(nn.Module):
    def __init__(self, layers, activation=torch.tanh, output_activation=None, output_scale=1,
                 output_squeeze=False):
        super(MLP, self).__init__()
        self.layers = nn.ModuleList()
        self.activation = activation
        self.output_activation = output_activation
        self.output_scale = output_scale
        self.output_squeeze = output_squeeze
        for i, layer in enumerate(layers[1:]):
            self.layers.append(nn.Linear(layers[i], layer))
            nn.init.zeros_(self.layers[i].bias)

    def forward(self, inputs):
        x = inputs
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        if self.output_activation is None:
            x = self.layers[-1](x) * self.output_scale
        else:
            x = self.output_activation(self.layers[-1](x)) * self.output_scale
        return x.squeeze() if self.output_squeeze else x


class ActorCritic(nn.Module):
    def __init__(self, in_features, action_space, hidden_sizes=(400, 300), activation=torch.relu,
                 output_activation=torch.tanh):
        super(ActorCritic, self).__init__()
        action_dim = action_space.shape[0]
        action_scale = action_space.high[0]
        self.policy = MLP(layers=[in_features] + list(hidden_sizes) + [action_dim], activation=activation,
                          output_activation=output_activation, output_scale=action_scale)
        self.q = MLP(layers=[in_features + action_dim] + list(hidden_sizes) + [1], activation=activation,
                     output_squeeze=True)

    def forward(self, x, a):
        pi = self.policy(x)
        q = self.q(torch.cat((x, a), dim=1))
        q_pi = self.q(torch.cat((x, pi), dim=1))
        return pi, q, q_pi


# ---- fireup/algos/ddpg/ddpg.py ----
class ReplayBuffer:
    def __init__(self, obs_dim, act_dim, size):
        self.obs1_buf = np.zeros([size, obs_dim], dtype=np.float32)
        self.obs2_buf = np.zeros([size, obs_dim], dtype=np.float32)
        self.acts_buf = np.zeros([size, act_dim], dtype=np.float32)
        self.rews_buf = np.zeros(size, dtype=np.float32)
        self.done_buf = np.zeros(size, dtype=np.float32)
        self.ptr, self.size, self.max_size = 0, 0, size

    def store(self, obs, act, rew, next_obs, done):
        self.obs1_buf[self.ptr] = obs
        self.obs2_buf[self.ptr] = next_obs
        self.acts_buf[self.ptr] = act
        self.rews_buf[self.ptr] = rew
        self.done_buf[self.ptr] = done
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def sample_batch(self, batch_size=32):
        idxs = np.random.randint(0, self.size, size=batch_size)
        return dict(obs1=self.obs1_buf[idxs], obs2=self.obs2_buf[idxs], acts=self.acts_buf[idxs],
                    rews=self.rews_buf[idxs], done=self.done_buf[idxs])


def ddpg(env_fn, actor_critic=ActorCritic, ac_kwargs=dict(), seed=0, steps_per_epoch=30, epochs=1,
         replay_size=int(1e4), gamma=0.99, polyak=0.995, pi_lr=1e-3, q_lr=1e-3, batch_size=8,
         start_steps=10, act_noise=0.1, max_ep_len=10):
    logger = EpochLogger()
    torch.manual_seed(seed)
    np.random.seed(seed)

    env = env_fn()
    obs_dim = env.observation_space.shape[0]
    act_dim = env.action_space.shape[0]
    act_limit = env.action_space.high[0]
    ac_kwargs["action_space"] = env.action_space

    main = actor_critic(in_features=obs_dim, **ac_kwargs)
    target = actor_critic(in_features=obs_dim, **ac_kwargs)
    target.eval()

    replay_buffer = ReplayBuffer(obs_dim=obs_dim, act_dim=act_dim, size=replay_size)

    var_counts = tuple(count_vars(module) for module in [main.policy, main.q, main])
    print("\nNumber of parameters: \t pi: %d, \t q: %d, \t total: %d\n" % var_counts)

    pi_optimizer = torch.optim.Adam(main.policy.parameters(), lr=pi_lr)
    q_optimizer = torch.optim.Adam(main.q.parameters(), lr=q_lr)

    target.load_state_dict(main.state_dict())

    def get_action(o, noise_scale):
        pi = main.policy(torch.Tensor(o.reshape(1, -1)))
        a = pi.detach().numpy()[0] + noise_scale * np.random.randn(act_dim)
        return np.clip(a, -act_limit, act_limit)

    start_time = time.time()
    o, r, d, ep_ret, ep_len = env.reset(), 0, False, 0, 0
    total_steps = steps_per_epoch * epochs

    for t in range(total_steps):
        main.eval()
        if t > start_steps:
            a = get_action(o, act_noise)
        else:
            a = env.action_space.sample()

        o2, r, d, _ = env.step(a)
        ep_ret += r
        ep_len += 1
        d = False if ep_len == max_ep_len else d
        replay_buffer.store(o, a, r, o2, d)
        o = o2

        if d or (ep_len == max_ep_len):
            main.train()
            for _ in range(ep_len):
                batch = replay_buffer.sample_batch(batch_size)
                (obs1, obs2, acts, rews, done) = (
                    torch.Tensor(batch["obs1"]),
                    torch.Tensor(batch["obs2"]),
                    torch.Tensor(batch["acts"]),
                    torch.Tensor(batch["rews"]),
                    torch.Tensor(batch["done"]),
                )
                _, _, q_pi_targ = target(obs2, acts)

                # Bellman backup for Q function
                backup = (rews + gamma * (1 - done) * q_pi_targ).detach()

                # DDPG Q loss
                _, q, _ = main(obs1, acts)
                q_loss = F.mse_loss(q, backup)

                # Q-learning update
                q_optimizer.zero_grad()
                q_loss.backward()
                q_optimizer.step()
                logger.store(LossQ=q_loss.item(), QVals=q.data.numpy())

                # DDPG Policy loss
                _, _, q_pi = main(obs1, acts)
                pi_loss = -q_pi.mean()

                # Policy update
                pi_optimizer.zero_grad()
                pi_loss.backward()
                pi_optimizer.step()
                logger.store(LossPi=pi_loss.item())

                # Polyak averaging for target parameters
                for p_main, p_target in zip(main.parameters(), target.parameters()):
                    p_target.data.copy_(polyak * p_target.data + (1 - polyak) * p_main.data)

            logger.store(EpRet=ep_ret, EpLen=ep_len)
            o, r, d, ep_ret, ep_len = env.reset(), 0, False, 0, 0

    print("Time", time.time() - start_time)
    return logger


if __name__ == "__main__":
    ddpg(lambda: PointEnv(0), actor_critic=ActorCritic, ac_kwargs=dict(hidden_sizes=[16, 16]))
