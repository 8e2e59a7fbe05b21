# Source: https://github.com/lweitkamp/option-critic-pytorch/issues/5
"""option-critic-pytorch (CartPole, OptionCriticFeatures): the episode loop computes
`state = option_critic.get_state(to_tensor(next_obs))` before the update, and the next step's
get_action(state, option) builds its logits as `state @ self.options_W[option] + ...`, so the
policy loss backwards through the feature network's graph from before optim.step() changed its
weights: "[torch.cuda.FloatTensor [32, 64]], which is output 0 of TBackward, is at version 2;
expected version 1" (torch >= 1.5; the author's fix, 38728db: "how I access the state variable",
state.data in get_action). A random-observation environment of CartPole's shapes replaces gym,
the buffer and loss functions are the repository's, the prime network is copied with deepcopy,
and the logger is left out."""
from copy import deepcopy
from math import exp
import random
from collections import deque

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical, Bernoulli


def to_tensor(obs):
    obs = np.asarray(obs)
    obs = torch.from_numpy(obs).float()
    return obs


class RandomCartPole:
    """observation_space.shape == (4,), action_space.n == 2"""
    def __init__(self, episode_len=12):
        self.episode_len, self.t = episode_len, 0

    def reset(self):
        self.t = 0
        return np.random.randn(4).astype(np.float32)

    def step(self, action):
        self.t += 1
        return np.random.randn(4).astype(np.float32), 1.0, self.t >= self.episode_len, {}


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


class OptionCriticFeatures(nn.Module):
    def __init__(self, in_features, num_actions, num_options, temperature=1.0, eps_start=1.0,
                 eps_min=0.1, eps_decay=int(1e6), eps_test=0.05, device='cpu', testing=False):
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
        self.Q = nn.Linear(64, num_options)                 # Policy-Over-Options
        self.terminations = nn.Linear(64, num_options)      # Option-Termination
        self.options_W = nn.Parameter(torch.zeros(num_options, 64, num_actions))
        self.options_b = nn.Parameter(torch.zeros(num_options, num_actions))
        self.train(not testing)

    def get_state(self, obs):
        if obs.ndim < 4:
            obs = obs.unsqueeze(0)
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
    options = torch.LongTensor(options)
    rewards = torch.FloatTensor(rewards)
    masks = 1 - torch.FloatTensor(dones)

    states = model.get_state(to_tensor(obs)).squeeze(0)
    Q = model.get_Q(states)
    next_states_prime = model_prime.get_state(to_tensor(next_obs)).squeeze(0)
    next_Q_prime = model_prime.get_Q(next_states_prime)
    next_states = model.get_state(to_tensor(next_obs)).squeeze(0)
    next_termination_probs = model.get_terminations(next_states).detach()
    next_options_term_prob = next_termination_probs[batch_idx, options]

    gt = rewards + masks * args['gamma'] * \
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

    gt = reward + (1 - done) * args['gamma'] * \
        ((1 - next_option_term_prob) * next_Q_prime[option] + next_option_term_prob * next_Q_prime.max(dim=-1)[0])
    termination_loss = option_term_prob * (Q[option].detach() - Q.max(dim=-1)[0].detach() + args['termination_reg']) * (1 - done)
    policy_loss = -logp * (gt.detach() - Q[option]) - args['entropy_reg'] * entropy
    actor_loss = termination_loss + policy_loss
    return actor_loss


def run(args):
    env = RandomCartPole()
    option_critic = OptionCriticFeatures(in_features=4, num_actions=2, num_options=args['num_options'])
    option_critic_prime = deepcopy(option_critic)
    optim = torch.optim.RMSprop(option_critic.parameters(), lr=args['learning_rate'])
    buffer = ReplayBuffer(capacity=args['max_history'], seed=args['seed'])

    steps = 0
    while steps < args['max_steps_total']:
        obs = env.reset()
        state = option_critic.get_state(to_tensor(obs))
        greedy_option = option_critic.greedy_option(state)
        current_option = 0

        done = False; ep_steps = 0; option_termination = True
        while not done and ep_steps < args['max_steps_ep']:
            epsilon = option_critic.epsilon
            if option_termination:
                current_option = np.random.choice(args['num_options']) if np.random.rand() < epsilon else greedy_option

            action, logp, entropy = option_critic.get_action(state, current_option)

            next_obs, reward, done, _ = env.step(action)
            buffer.push(obs, current_option, reward, next_obs, done)

            old_state = state
            state = option_critic.get_state(to_tensor(next_obs))

            option_termination, greedy_option = option_critic.predict_option_termination(state, current_option)

            actor_loss, critic_loss = None, None
            if len(buffer) > args['batch_size']:
                actor_loss = actor_loss_fn(obs, current_option, logp, entropy,
                                           reward, done, next_obs, option_critic, option_critic_prime, args)
                loss = actor_loss

                if steps % args['update_frequency'] == 0:
                    data_batch = buffer.sample(args['batch_size'])
                    critic_loss = critic_loss_fn(option_critic, option_critic_prime, data_batch, args)
                    loss += critic_loss

                optim.zero_grad()
                loss.backward()  # expect: GG103
                optim.step()

                if steps % args['freeze_interval'] == 0:
                    option_critic_prime.load_state_dict(option_critic.state_dict())

            steps += 1
            ep_steps += 1
            obs = next_obs


run(dict(num_options=2, learning_rate=5e-4, gamma=0.99, max_history=1000, seed=0, batch_size=4,
         freeze_interval=20, update_frequency=4, termination_reg=0.01, entropy_reg=0.01,
         max_steps_ep=100, max_steps_total=12))
