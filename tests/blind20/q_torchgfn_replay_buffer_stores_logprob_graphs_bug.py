# Source: https://github.com/GFNOrg/torchgfn/pull/87
"""torchgfn, scripts/train.py before PR #87 ("fix torch error Trying to backward through the graph a
second time").

The training script samples trajectories with the forward policy; the sampler stores each step's
`log_probs` *with* their graph (the TB loss can reuse them when `on_policy` is True, which
`make_sampler` sets for the plain on-policy sampler). With `--replay_buffer_size > 0` the
trajectories go through `ReplayBuffer.add`, whose `Trajectories.extend` does
`self.log_probs = torch.cat((self.log_probs, other.log_probs), dim=1)`, and the loss is taken on
`replay_buffer.sample(...)`. After the first `loss.backward()` freed the first batch's sampler
graph, the buffer's `log_probs` still hang on it (through the chain of `cat`s), so the second
iteration's `loss.backward()` raises "Trying to backward through the graph a second time".

Fix (in the _ok twin): the PR wraps `replay_buffer.add` / `replay_buffer.sample` in
`torch.no_grad()`, so the buffer keeps plain tensors. That alone leaves `loss_fn.on_policy` True,
and the TB loss would then use the stored, graph-less log-probs and never train the forward policy;
replayed trajectories are off-policy anyway, so the twin also sets `loss_fn.on_policy = False` when
a replay buffer is used (log-probs are re-evaluated with the current policy).

Stand-ins: a bit-sequence environment (every trajectory has `ndim` steps; reward from the number
of ones) instead of the HyperGrid, small MLP estimators, a uniform (here: single-parent, log 1 = 0)
backward policy, a dict config, no wandb/validation. Trajectories, ReplayBuffer, the sampler, the TB
loss and the training loop keep the library's structure.
"""
import torch
import torch.nn as nn
from torch.distributions import Categorical


# ---- gfn/envs (stand-in) ----
class BitSequenceEnv:
    def __init__(self, ndim=4):
        self.ndim = ndim
        self.n_actions = 2
        self.s0 = torch.full((ndim,), -1.0)

    def step(self, states, actions, t):
        new_states = states.clone()
        new_states[:, t] = actions.float()
        return new_states

    def log_reward(self, final_states):
        return torch.log(0.1 + final_states.sum(-1))


# ---- gfn/containers/trajectories.py ----
class Trajectories:
    def __init__(self, env, states=None, actions=None, log_probs=None, log_rewards=None):
        self.env = env
        L = env.ndim
        self.states = states if states is not None else torch.zeros(L + 1, 0, L)
        self.actions = actions if actions is not None else torch.zeros(L, 0, dtype=torch.long)
        self.log_probs = log_probs if log_probs is not None else torch.zeros(L, 0)
        self._log_rewards = log_rewards if log_rewards is not None else torch.zeros(0)

    def __len__(self):
        return self.actions.shape[1]

    @property
    def log_rewards(self):
        return self._log_rewards

    def __getitem__(self, index):
        return Trajectories(self.env, self.states[:, index], self.actions[:, index],
                            self.log_probs[:, index], self._log_rewards[index])

    def extend(self, other):
        """Extend the trajectories with another set of trajectories."""
        self.states = torch.cat((self.states, other.states), dim=1)
        self.actions = torch.cat((self.actions, other.actions), dim=1)
        self.log_probs = torch.cat((self.log_probs, other.log_probs), dim=1)
        self._log_rewards = torch.cat((self._log_rewards, other._log_rewards), dim=0)

    def sample(self, n_trajectories):
        perm = torch.randperm(len(self))
        return self[perm[:n_trajectories]]


# ---- gfn/containers/replay_buffer.py ----
class ReplayBuffer:
    def __init__(self, env, loss_fn=None, capacity=1000):
        self.env = env
        self.capacity = capacity
        self.training_objects = Trajectories(env)
        self.objects_type = "trajectories"
        self._is_full = False
        self._index = 0

    def __len__(self):
        return self.capacity if self._is_full else self._index

    def add(self, training_objects):
        to_add = len(training_objects)
        self._is_full |= self._index + to_add >= self.capacity
        self._index = (self._index + to_add) % self.capacity
        self.training_objects.extend(training_objects)
        self.training_objects = self.training_objects[-self.capacity:]

    def sample(self, n_trajectories):
        return self.training_objects.sample(n_trajectories)


# ---- gfn/estimators + samplers ----
class LogitPFEstimator(nn.Module):
    def __init__(self, env, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(env.ndim + 1, hidden), nn.ReLU(), nn.Linear(hidden, env.n_actions))

    def forward(self, states, t):
        step = torch.full((states.shape[0], 1), float(t))
        return self.net(torch.cat([states, step], dim=1))


class LogZEstimator(nn.Module):
    def __init__(self):
        super().__init__()
        self.tensor = nn.Parameter(torch.zeros(1))


class TBParametrization(nn.Module):
    def __init__(self, logit_PF, logZ):
        super().__init__()
        self.logit_PF = logit_PF
        self.logZ = logZ


class TrajectoriesSampler:
    def __init__(self, env, logit_PF):
        self.env = env
        self.logit_PF = logit_PF

    def sample(self, n_trajectories):
        states = self.env.s0.repeat(n_trajectories, 1)
        all_states, actions, trajectories_logprobs = [states], [], []
        for t in range(self.env.ndim):
            dist = Categorical(logits=self.logit_PF(states, t))
            a = dist.sample()
            trajectories_logprobs += [dist.log_prob(a)]
            actions += [a]
            states = self.env.step(states, a, t)
            all_states += [states]
        return Trajectories(self.env, torch.stack(all_states), torch.stack(actions),
                            torch.stack(trajectories_logprobs), self.env.log_reward(states))


def trajectories_to_training_samples(trajectories, loss_fn):
    return trajectories


# ---- gfn/losses/trajectory_balance.py ----
class TrajectoryBalance:
    def __init__(self, parametrization, log_reward_clip_min=-12, on_policy=False):
        self.parametrization = parametrization
        self.log_reward_clip_min = log_reward_clip_min
        self.on_policy = on_policy

    def get_pfs_and_pbs(self, trajectories, no_pf=False):
        log_pf = None
        if not no_pf:
            log_pf = torch.stack([
                Categorical(logits=self.parametrization.logit_PF(trajectories.states[t], t))
                .log_prob(trajectories.actions[t]) for t in range(trajectories.env.ndim)])
        log_pb = torch.zeros_like(trajectories.actions, dtype=torch.float)  # single parent
        return log_pf, log_pb

    def get_trajectories_scores(self, trajectories):
        log_pf_trajectories, log_pb_trajectories = self.get_pfs_and_pbs(trajectories, no_pf=self.on_policy)
        if self.on_policy:
            log_pf_trajectories = trajectories.log_probs
        log_pf_trajectories = log_pf_trajectories.sum(dim=0)
        log_pb_trajectories = log_pb_trajectories.sum(dim=0)
        log_rewards = trajectories.log_rewards.clamp_min(self.log_reward_clip_min)
        return log_pf_trajectories, log_pb_trajectories, log_pf_trajectories - log_pb_trajectories - log_rewards

    def __call__(self, trajectories):
        _, _, scores = self.get_trajectories_scores(trajectories)
        loss = (scores + self.parametrization.logZ.tensor).pow(2).mean()
        if torch.isnan(loss):
            raise ValueError("loss is nan")
        return loss


# ---- scripts/train.py ----
if __name__ == "__main__":
    config = {"seed": 0, "ndim": 4, "batch_size": 8, "n_iterations": 3, "replay_buffer_size": 32,
              "lr": 1e-3, "lr_Z": 0.1}
    torch.manual_seed(config["seed"])

    env = BitSequenceEnv(config["ndim"])
    parametrization = TBParametrization(LogitPFEstimator(env), LogZEstimator())
    loss_fn = TrajectoryBalance(parametrization)
    optimizer = torch.optim.Adam([
        {"params": parametrization.logit_PF.parameters(), "lr": config["lr"]},
        {"params": parametrization.logZ.parameters(), "lr": config["lr_Z"]}])
    trajectories_sampler, on_policy = TrajectoriesSampler(env, parametrization.logit_PF), True
    loss_fn.on_policy = on_policy

    replay_buffer = None
    if config["replay_buffer_size"] > 0:
        replay_buffer = ReplayBuffer(env, loss_fn, capacity=config["replay_buffer_size"])

    states_visited = 0
    for i in range(config["n_iterations"]):
        trajectories = trajectories_sampler.sample(n_trajectories=config["batch_size"])
        training_samples = trajectories_to_training_samples(trajectories, loss_fn)
        if replay_buffer is not None:
            replay_buffer.add(training_samples)
            training_objects = replay_buffer.sample(n_trajectories=config["batch_size"])
        else:
            training_objects = training_samples

        optimizer.zero_grad()
        loss = loss_fn(training_objects)
        loss.backward()  # expect: GG101

        optimizer.step()

        states_visited += len(trajectories)
        to_log = {"loss": loss.item(), "states_visited": states_visited}
        print(f"{i}: {to_log}")
