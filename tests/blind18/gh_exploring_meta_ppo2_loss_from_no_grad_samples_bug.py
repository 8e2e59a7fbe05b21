# Source: https://github.com/Kostis-S-Z/exploring_meta/issues/16
"""exploring_meta, procgen_a2c_ppo2.py (A2C/PPO2 baseline on Procgen): the `Sampler` collects the rollout
under `torch.no_grad()` and stores the policy's log-probs and values as numpy arrays (`to_np`), and
`compute_a2c_loss` rebuilds them with `torch.from_numpy`, so the policy and value losses are built from
plain data and `loss.backward()` raises "element 0 of tensors does not require grad and does not have a
grad_fn" (issue #16: "Loss in PPO2 needs to be manually set to 'requires_grad=True'"). The author's
workaround, `loss.requires_grad = True`, only silences it: the loss stays disconnected from the policy and
nothing trains. The `_ok` twin is the right fix: the update re-evaluates the policy on the stored states
and actions, so the log-probs and values carry the graph. ProcgenEnv/baselines wrappers, cherry's losses
and GAE, learn2learn and the Experiment logger are small stand-ins; 16x16 frames, 2 iterations, CPU.
"""
import math
import random
from collections import OrderedDict, defaultdict

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical

params = {
    "lr": 0.005,
    "gamma": 0.99,
    "tau": 0.95,
    "n_envs": 1,
    "n_steps_per_episode": 8,
    "n_iters": 2,
    "seed": 42,
}
network = [4, 8]
FRAME = 16  # Procgen frames are 64x64; 16x16 here


# ---- procgen / baselines stand-ins ----
class Box:
    def __init__(self, shape):
        self.shape = shape
        self.dtype = np.dtype(np.uint8)


class Discrete:
    def __init__(self, n):
        self.n = n


class ProcgenEnvStandIn:
    """VecExtractDictObs(ProcgenEnv(...), 'rgb') stand-in: random uint8 frames, random rewards."""
    def __init__(self, num_envs, seed):
        self.num_envs = num_envs
        self.rng = np.random.RandomState(seed)
        self.observation_space = Box((FRAME, FRAME, 3))
        self.action_space = Discrete(15)

    def reset(self):
        return self.rng.randint(0, 255, (self.num_envs, FRAME, FRAME, 3)).astype(np.uint8)

    def step(self, actions):
        obs = self.rng.randint(0, 255, (self.num_envs, FRAME, FRAME, 3)).astype(np.uint8)
        rewards = self.rng.rand(self.num_envs).astype(np.float32)
        dones = self.rng.rand(self.num_envs) < 0.1
        return obs, rewards, dones, [{} for _ in range(self.num_envs)]


# ---- cherry stand-ins ----
def generalized_advantage(gamma, tau, rewards, dones, values, next_value):
    advantages = torch.zeros_like(rewards)
    gae = 0.0
    next_v = next_value
    for t in reversed(range(rewards.shape[0])):
        delta = rewards[t] + gamma * next_v * (1.0 - dones[t]) - values[t]
        gae = delta + gamma * tau * (1.0 - dones[t]) * gae
        advantages[t] = gae
        next_v = values[t]
    return advantages


def normalize(x, epsilon=1e-8):
    return (x - x.mean()) / (x.std() + epsilon)


def discount(gamma, rewards, dones):
    returns = torch.zeros_like(rewards)
    running = 0.0
    for t in reversed(range(rewards.shape[0])):
        running = rewards[t] + gamma * running * (1.0 - dones[t])
        returns[t] = running
    return returns


def policy_loss(log_probs, advantages):
    return -torch.mean(log_probs * advantages)


def state_value_loss(values, rewards):
    return 0.5 * (rewards - values).pow(2).mean()


# ---- core_functions/policies.py ----
def maml_init_(module):
    torch.nn.init.xavier_uniform_(module.weight.data, gain=1.0)
    torch.nn.init.constant_(module.bias.data, 0.0)
    return module


def build_procgen_cnn(input_size, output_size, network):
    n_layers = len(network)
    activation = nn.ReLU
    features = OrderedDict(
        {"conv_0": nn.Conv2d(in_channels=input_size, out_channels=network[0], kernel_size=3, padding=1),
         "bn_0": nn.BatchNorm2d(network[0]),
         "activation_0": activation(),
         "max_pool_0": nn.MaxPool2d(kernel_size=2, stride=2)})
    maml_init_(features["conv_0"])
    nn.init.uniform_(features["bn_0"].weight)
    for i in range(1, n_layers):
        layer_i = {f"conv_{i}": nn.Conv2d(in_channels=network[i - 1], out_channels=network[i],
                                          kernel_size=3, stride=1, padding=1),
                   f"bn_{i}": nn.BatchNorm2d(network[i]),
                   f"activation_{i}": activation(),
                   f"max_pool_{i}": nn.MaxPool2d(kernel_size=2, stride=2)}
        maml_init_(layer_i[f"conv_{i}"])
        nn.init.uniform_(layer_i[f"bn_{i}"].weight)
        features.update(layer_i)
    final_pixel_dim = int(FRAME / (math.pow(2, n_layers)))
    flatten_size = network[-1] * final_pixel_dim * final_pixel_dim
    network_body = nn.Sequential(*list(features.values()))
    head = nn.Linear(in_features=flatten_size, out_features=output_size)
    maml_init_(head)
    return flatten_size, network_body, head


class Actor(nn.Module):
    def __init__(self, input_size, output_size, network, stochastic=True):
        super().__init__()
        self.flatten_size, self.features, self.head = build_procgen_cnn(input_size, output_size, network)
        if stochastic:
            self.policy_log_std = nn.Parameter(torch.tensor([[0.]]))

    def forward(self, state):
        features = self.features(state)
        features = features.view(-1, self.flatten_size)
        policy = self.head(features)
        return policy


class Critic(nn.Module):
    def __init__(self, input_size, output_size, network, state_action=False):
        super().__init__()
        self.state_action = state_action
        self.flatten_size, self.features, self.head = build_procgen_cnn(input_size, output_size, network)

    def forward(self, state, action=None):
        input_state = torch.cat([state, action], dim=1) if self.state_action else state
        features = self.features(input_state)
        features = features.view(-1, self.flatten_size)
        value = self.head(features)
        return value.squeeze(dim=1)


class ActorCritic(nn.Module):
    def __init__(self, input_size, output_size, network=[32, 64, 64]):
        super().__init__()
        self.actor = Actor(input_size, output_size, network, stochastic=False)
        self.critic = Critic(input_size, 1, network)
        # This is just a trivial assignment to follow the implementation of the sampler
        self.step = self.forward

    def forward(self, state):
        policy = Categorical(logits=self.actor(state))
        value = self.critic(state)
        action = policy.sample()
        log_prob = policy.log_prob(action)
        return action, {
            'mass': policy,
            'log_prob': log_prob,
            'value': value,
        }


# ---- sampler_ppo2.py ----
def tensor(x, device):
    if isinstance(x, torch.Tensor):
        return x.to(device)
    x = np.asarray(x, dtype=float)  # np.float in the original, removed from numpy
    x = torch.tensor(x, device=device, dtype=torch.float32)
    return x


def input_preprocessing(x, device):
    x = np.ascontiguousarray(np.transpose(x, (0, 3, 1, 2)))  # contiguous, for the .view in Actor/Critic
    x = tensor(x, device)
    x = x.float()
    x /= 255.0
    return x


def to_np(t):
    return t.cpu().detach().numpy()


class Sampler:
    def __init__(self, env, model, num_steps, gamma_coef, lambda_coef, device, num_envs):
        self.env = env
        self.model = model
        self.num_steps = num_steps
        self.lam = lambda_coef
        self.gamma = gamma_coef
        self.device = device
        self.obs = np.zeros((num_envs,) + env.observation_space.shape, dtype=env.observation_space.dtype.name)
        self.obs[:] = env.reset()
        self.dones = np.array([False for _ in range(num_envs)])

    def run(self, with_adv_ret=True):
        storage = defaultdict(list)  # should contain (state, action, reward, done, next state)
        epinfos = []
        self.model.eval()

        with torch.no_grad():
            for _ in range(self.num_steps):
                obs = input_preprocessing(self.obs, device=self.device)
                storage["states"] += [to_np(obs.clone())]
                # Forward pass
                prediction, infos = self.model.step(obs)
                actions = to_np(prediction)
                storage["actions"] += [actions]
                storage["values"] += [to_np(infos["value"])]
                storage["log_prob"] += [to_np(infos["log_prob"])]

                self.obs[:], rewards, self.dones, _ = self.env.step(actions)
                storage["rewards"] += [rewards]
                # Convert booleans to integers
                storage["dones"] += [[int(d is True) for d in self.dones]]

            # batch of steps to batch of rollouts
            for key in storage:
                storage[key] = np.asarray(storage[key])

        for key in storage:
            s = storage[key].shape
            storage[key] = storage[key].swapaxes(0, 1).reshape(s[0] * s[1], *s[2:])
        self.model.train()
        return storage, epinfos


# ---- core_functions/a2c_ppo2.py ----
def compute_adv_ret(train_episodes, gamma, tau, device='cpu'):
    values = torch.from_numpy(train_episodes["values"]).to(device)
    rewards = torch.from_numpy(train_episodes["rewards"]).to(device)
    dones = torch.from_numpy(train_episodes["dones"]).to(device).float()
    with torch.no_grad():
        advantages = generalized_advantage(gamma, tau, rewards, dones, values, torch.zeros(1, device=device))
        advantages = normalize(advantages, epsilon=1e-8)
        returns = discount(gamma, rewards, dones)
    return advantages, returns


def compute_a2c_loss(episode_samples, device='cpu'):
    log_prob = torch.from_numpy(episode_samples["log_prob"]).to(device)
    advantages = torch.from_numpy(episode_samples["advantages"]).to(device)
    values = torch.from_numpy(episode_samples["values"]).to(device)
    returns = torch.from_numpy(episode_samples["returns"]).to(device)
    return policy_loss(log_prob, advantages), state_value_loss(values, returns)


# ---- procgen_a2c_ppo2.py ----
class PPO2Procgen:
    def __init__(self):
        self.params = params
        device = torch.device('cpu')
        random.seed(self.params['seed'])
        np.random.seed(self.params['seed'])
        torch.manual_seed(self.params['seed'])
        self.run(device)

    def make_procgen_env(self, iteration):
        return ProcgenEnvStandIn(self.params['n_envs'], seed=iteration)

    def run(self, device):
        env = self.make_procgen_env(0)
        observ_space = env.observation_space.shape[::-1]
        observ_size = len(observ_space)
        action_space = env.action_space.n

        policy = ActorCritic(observ_size, action_space, network)
        policy.to(device)
        policy_optimiser = torch.optim.Adam(policy.parameters(), lr=self.params['lr'])

        value_l_weight = 0.5
        for iteration in range(self.params['n_iters']):
            env = self.make_procgen_env(iteration)
            sampler = Sampler(env=env, model=policy, num_steps=self.params['n_steps_per_episode'],
                              gamma_coef=params['gamma'], lambda_coef=params['tau'],
                              device=device, num_envs=self.params['n_envs'])

            tr_ep_samples, tr_ep_infos = sampler.run(with_adv_ret=False)
            tr_rewards = tr_ep_samples['rewards'].sum().item() / self.params['n_envs']

            advantages, returns = compute_adv_ret(tr_ep_samples, self.params['gamma'], self.params['tau'], device)
            tr_ep_samples["advantages"] = advantages.cpu().detach().numpy()
            tr_ep_samples["returns"] = returns.cpu().detach().numpy()

            policy_loss, value_loss = compute_a2c_loss(tr_ep_samples, device)

            loss = policy_loss + (value_l_weight * value_loss)

            # Optimize
            policy_optimiser.zero_grad()
            # loss.requires_grad = True
            loss.backward()  # expect: GG104
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            policy_optimiser.step()
            print(iteration, tr_rewards, loss.item())


if __name__ == '__main__':
    PPO2Procgen()
