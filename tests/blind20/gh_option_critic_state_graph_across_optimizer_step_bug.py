# Source: https://github.com/lweitkamp/option-critic-pytorch/issues/9
"""option-critic-pytorch (main.py + option_critic.py) on a CartPole-like environment.

Each environment step the loop computes `state = option_critic.get_state(to_tensor(next_obs))`
(a forward through the shared `features` MLP) and keeps it for the next step, where
`get_action(state, option)` builds the intra-option policy from it:
`logits = state @ self.options_W[option] + ...`, so `logp`/`entropy` hang on the graph of that
earlier forward.  Once the replay buffer is large enough, every step runs `loss.backward()` and
`optim.step()`, which updates the `features` weights in place.  On the next step the actor loss
uses `logp` computed from the state produced *before* that step, so `loss.backward()` needs the old
`features` weights and raises "one of the variables needed for gradient computation has been
modified by an inplace operation: [torch.FloatTensor [32, 64]], which is output 0 of
AsStridedBackward0 ..." (reported on torch 1.x; same in torch 2.13).

Fix (the maintainer's commit 38728db, "fix state selection in pytorch"): the policy head uses the
state's data, `logits = state.data @ self.options_W[option] + self.options_b[option]`.
"""
import argparse
import random
from collections import deque
from copy import deepcopy
from math import exp

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Bernoulli, Categorical


# ---------------- option_critic.py ----------------
class OptionCriticFeatures(nn.Module):
    def __init__(self, in_features, num_actions, num_options, temperature=1.0, eps_start=1.0, eps_min=0.1,
                 eps_decay=int(1e6), eps_test=0.05, device='cpu', testing=False):
        super(OptionCriticFeatures, self).__init__()
        self.in_features = in_features
        self.num_actions = num_actions
        self.num_options = num_options
        self.device = device
        self.testing = testing
        self.temperature = temperature
        self.eps_min = eps_min
        self.eps_start = eps_start
        self.eps_decay = eps_decay
        self.eps_test = eps_test
        self.num_steps = 0

        self.features = nn.Sequential(nn.Linear(in_features, 32), nn.ReLU(), nn.Linear(32, 64), nn.ReLU())
        self.Q = nn.Linear(64, num_options)
        self.terminations = nn.Linear(64, num_options)
        self.options_W = nn.Parameter(torch.zeros(num_options, 64, num_actions))
        self.options_b = nn.Parameter(torch.zeros(num_options, num_actions))
        self.to(device)
        self.train(not testing)

    def get_state(self, obs):
        if obs.ndim < 4:
            obs = obs.unsqueeze(0)
        obs = obs.to(self.device)
        state = self.features(obs)
        return state

    def get_Q(self, state):
        return self.Q(state)

    def predict_option_termination(self, state, current_option):
        termination = self.terminations(state)[:, current_option].sigmoid()
        option_termination = Bernoulli(termination).sample()
        Q = self.get_Q(state)
        next_option = Q.argmax(dim=-1)
        return bool(option_termination.item()), next_option.item()

    def get_terminations(self, state):
        return self.terminations(state).sigmoid()

    def get_action(self, state, option):
        logits = state @ self.options_W[option] + self.options_b[option]
        action_dist = (logits / self.temperature).softmax(dim=-1)
        action_dist = Categorical(action_dist)
        action = action_dist.sample()
        logp = action_dist.log_prob(action)
        entropy = action_dist.entropy()
        return action.item(), logp, entropy

    def greedy_option(self, state):
        Q = self.get_Q(state)
        return Q.argmax(dim=-1).item()

    @property
    def epsilon(self):
        if not self.testing:
            eps = self.eps_min + (self.eps_start - self.eps_min) * exp(-self.num_steps / self.eps_decay)
            self.num_steps += 1
        else:
            eps = self.eps_test
        return eps


def critic_loss_fn(model, model_prime, data_batch, args):
    obs, options, rewards, next_obs, dones = data_batch
    batch_idx = torch.arange(len(options)).long()
    options = torch.LongTensor(options).to(model.device)
    rewards = torch.FloatTensor(rewards).to(model.device)
    masks = 1 - torch.FloatTensor(dones).to(model.device)

    states = model.get_state(to_tensor(obs)).squeeze(0)
    Q = model.get_Q(states)
    next_states_prime = model_prime.get_state(to_tensor(next_obs)).squeeze(0)
    next_Q_prime = model_prime.get_Q(next_states_prime)
    next_states = model.get_state(to_tensor(next_obs)).squeeze(0)
    next_termination_probs = model.get_terminations(next_states).detach()
    next_options_term_prob = next_termination_probs[batch_idx, options]

    gt = rewards + masks * args.gamma * \
        ((1 - next_options_term_prob) * next_Q_prime[batch_idx, options] + next_options_term_prob * next_Q_prime.max(dim=-1)[0])
    td_err = (Q[batch_idx, options] - gt.detach()).pow(2).mul(0.5).mean()
    return td_err


def actor_loss_fn(obs, option, logp, entropy, reward, done, next_obs, model, model_prime, args):
    state = model.get_state(to_tensor(obs))
    next_state = model.get_state(to_tensor(next_obs))
    next_state_prime = model_prime.get_state(to_tensor(next_obs))

    option_term_prob = model.get_terminations(state)[:, option]
    next_option_term_prob = model.get_terminations(next_state)[:, option].detach()

    Q = model.get_Q(state).detach().squeeze()
    next_Q_prime = model_prime.get_Q(next_state_prime).detach().squeeze()

    gt = reward + (1 - done) * args.gamma * \
        ((1 - next_option_term_prob) * next_Q_prime[option] + next_option_term_prob * next_Q_prime.max(dim=-1)[0])
    termination_loss = option_term_prob * (Q[option].detach() - Q.max(dim=-1)[0].detach() + args.termination_reg) * (1 - done)
    policy_loss = -logp * (gt.detach() - Q[option]) - args.entropy_reg * entropy
    actor_loss = termination_loss + policy_loss
    return actor_loss


# ---------------- experience_replay.py / utils.py / logger.py (stand-ins) ----------------
class ReplayBuffer(object):
    def __init__(self, capacity, seed=42):
        self.rng = random.Random(seed)
        self.buffer = deque(maxlen=capacity)

    def push(self, obs, option, reward, next_obs, done):
        self.buffer.append((obs, option, reward, next_obs, done))

    def sample(self, batch_size):
        obs, option, reward, next_obs, done = zip(*self.rng.sample(self.buffer, batch_size))
        return np.stack(obs), option, reward, np.stack(next_obs), done

    def __len__(self):
        return len(self.buffer)


def to_tensor(obs):
    obs = np.asarray(obs)
    obs = torch.from_numpy(obs).float()
    return obs


class Space:
    def __init__(self, shape=None, n=None):
        self.shape, self.n = shape, n


class CartPoleLike:
    """4-d observation, 2 actions, episodes of random length (stand-in for gym's CartPole-v0)."""

    def __init__(self):
        self.observation_space = Space(shape=(4,))
        self.action_space = Space(n=2)
        self.rng = np.random.RandomState(0)

    def seed(self, seed):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.t = 0
        self.s = self.rng.uniform(-0.05, 0.05, 4).astype(np.float32)
        return self.s

    def step(self, action):
        self.t += 1
        self.s = (self.s + self.rng.normal(0, 0.1, 4) + (0.05 if action else -0.05)).astype(np.float32)
        done = self.t >= 25 or bool(abs(self.s[0]) > 2.0)
        return self.s, 1.0, done, {}


def make_env(name):
    return CartPoleLike(), False


class Logger:
    def __init__(self, logdir, run_name):
        self.n_eps = 0

    def log_data(self, steps, actor_loss, critic_loss, entropy, epsilon):
        pass

    def log_episode(self, steps, rewards, option_lengths, ep_steps, epsilon):
        self.n_eps += 1
        print(f"episode {self.n_eps} steps {steps} reward {rewards}")


# ---------------- main.py ----------------
parser = argparse.ArgumentParser(description="Option Critic PyTorch")
parser.add_argument('--env', default='CartPole-v0')
parser.add_argument('--optimal-eps', type=float, default=0.05)
parser.add_argument('--learning-rate', type=float, default=.0005)
parser.add_argument('--gamma', type=float, default=.99)
parser.add_argument('--epsilon-start', type=float, default=1.0)
parser.add_argument('--epsilon-min', type=float, default=.1)
parser.add_argument('--epsilon-decay', type=float, default=20000)
parser.add_argument('--max-history', type=int, default=10000)
parser.add_argument('--batch-size', type=int, default=8)
parser.add_argument('--freeze-interval', type=int, default=20)
parser.add_argument('--update-frequency', type=int, default=4)
parser.add_argument('--termination-reg', type=float, default=0.01)
parser.add_argument('--entropy-reg', type=float, default=0.01)
parser.add_argument('--num-options', type=int, default=2)
parser.add_argument('--temp', type=float, default=1)
parser.add_argument('--max_steps_ep', type=int, default=30)
parser.add_argument('--max_steps_total', type=int, default=60)
parser.add_argument('--seed', type=int, default=0)


def run(args):
    env, is_atari = make_env(args.env)
    option_critic = OptionCriticFeatures
    device = torch.device('cpu')

    option_critic = option_critic(
        in_features=env.observation_space.shape[0], num_actions=env.action_space.n,
        num_options=args.num_options, temperature=args.temp, eps_start=args.epsilon_start,
        eps_min=args.epsilon_min, eps_decay=args.epsilon_decay, eps_test=args.optimal_eps, device=device)
    option_critic_prime = deepcopy(option_critic)

    optim = torch.optim.RMSprop(option_critic.parameters(), lr=args.learning_rate)

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    env.seed(args.seed)

    buffer = ReplayBuffer(capacity=args.max_history, seed=args.seed)
    logger = Logger(logdir="runs", run_name="OptionCriticFeatures-CartPole")

    steps = 0
    while steps < args.max_steps_total:
        rewards = 0
        option_lengths = {opt: [] for opt in range(args.num_options)}
        obs = env.reset()
        state = option_critic.get_state(to_tensor(obs))
        greedy_option = option_critic.greedy_option(state)
        current_option = 0

        done = False
        ep_steps = 0
        option_termination = True
        curr_op_len = 0
        while not done and ep_steps < args.max_steps_ep:
            epsilon = option_critic.epsilon
            if option_termination:
                option_lengths[current_option].append(curr_op_len)
                current_option = np.random.choice(args.num_options) if np.random.rand() < epsilon else greedy_option
                curr_op_len = 0

            action, logp, entropy = option_critic.get_action(state, current_option)

            next_obs, reward, done, _ = env.step(action)
            buffer.push(obs, current_option, reward, next_obs, done)

            old_state = state
            state = option_critic.get_state(to_tensor(next_obs))

            option_termination, greedy_option = option_critic.predict_option_termination(state, current_option)
            rewards += reward

            actor_loss, critic_loss = None, None
            if len(buffer) > args.batch_size:
                actor_loss = actor_loss_fn(obs, current_option, logp, entropy,
                                           reward, done, next_obs, option_critic, option_critic_prime, args)
                loss = actor_loss

                if steps % args.update_frequency == 0:
                    data_batch = buffer.sample(args.batch_size)
                    critic_loss = critic_loss_fn(option_critic, option_critic_prime, data_batch, args)
                    loss += critic_loss

                optim.zero_grad()
                loss.backward()  # expect: GG103
                optim.step()

                if steps % args.freeze_interval == 0:
                    option_critic_prime.load_state_dict(option_critic.state_dict())

            steps += 1
            ep_steps += 1
            curr_op_len += 1
            obs = next_obs
            logger.log_data(steps, actor_loss, critic_loss, entropy.item(), epsilon)

        logger.log_episode(steps, rewards, option_lengths, ep_steps, epsilon)


if __name__ == "__main__":
    args = parser.parse_args([])
    run(args)
