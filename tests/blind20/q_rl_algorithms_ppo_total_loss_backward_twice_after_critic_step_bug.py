# Source: https://github.com/medipixel/rl_algorithms/pull/274
"""medipixel/rl_algorithms, rl_algorithms/ppo/learner.py before PR #274 ("Update torch version
1.3.1 to 1.6.0": "In PPO, seperate loss that reapeated in training phase").

`PPOLearner.update_model` builds one `total_loss = actor_loss + w_value * critic_loss -
w_entropy * entropy` per mini-batch and uses it twice: `total_loss.backward(retain_graph=True)`,
clip and `self.critic_optim.step()` to train the critic, then `total_loss.backward()` again to
train the actor. The second backward walks the whole retained graph once more, including the
critic's Linear layers, whose saved weights `critic_optim.step()` has just updated in place, so it
raises "one of the variables needed for gradient computation has been modified by an inplace
operation" (torch >= 1.5 checks optimizer updates; with torch 1.3 it silently used the new
weights).

Fix (in the _ok twin): split the loss, `critic_loss_ = w_value * critic_loss` and
`actor_loss_ = actor_loss - w_entropy * entropy`, and backward each once before its own step, as
the PR does; the actor and critic graphs are disjoint, so the PR's remaining
`retain_graph=True` on the critic backward is not needed and is dropped.

Stand-ins: a random-walk vector env instead of gym (LunarLanderContinuous), small MLP "Brain"s
(Gaussian actor head, value head), a plain config namespace; the rollout stores its values and
log-probs computed under `torch.no_grad()`. `update_model`, `compute_gae` and `ppo_iter` keep
the repository's code.
"""
from collections import deque
from types import SimpleNamespace
from typing import List

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Normal
from torch.nn.utils import clip_grad_norm_
import torch.optim as optim


# ---- rl_algorithms/ppo/utils.py ----
def compute_gae(next_value, rewards, masks, values, gamma=0.99, tau=0.95) -> List:
    values = values + [next_value]
    gae = 0
    returns: deque = deque()
    for step in reversed(range(len(rewards))):
        delta = rewards[step] + gamma * values[step + 1] * masks[step] - values[step]
        gae = delta + gamma * tau * masks[step] * gae
        returns.appendleft(gae + values[step])
    return list(returns)


def ppo_iter(epoch, mini_batch_size, states, actions, values, log_probs, returns, advantages):
    batch_size = states.size(0)
    for _ in range(epoch):
        for _ in range(batch_size // mini_batch_size):
            rand_ids = np.random.choice(batch_size, mini_batch_size)
            yield states[rand_ids, :], actions[rand_ids, :], values[
                rand_ids, :
            ], log_probs[rand_ids, :], returns[rand_ids, :], advantages[rand_ids, :]


# ---- stand-ins for common/networks/brain.py ----
class GaussianActor(nn.Module):
    def __init__(self, state_size, output_size, hidden=32):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(state_size, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, output_size)
        self.log_std = nn.Linear(hidden, output_size)

    def forward(self, x):
        h = self.backbone(x)
        mu = torch.tanh(self.mu(h))
        std = torch.exp(self.log_std(h).clamp(-20, 2))
        dist = Normal(mu, std)
        action = dist.sample()
        return action, dist


class Critic(nn.Module):
    def __init__(self, state_size, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(state_size, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


def numpy2floattensor(x, device):
    return torch.as_tensor(np.asarray(x), dtype=torch.float32, device=device)


# ---- rl_algorithms/ppo/learner.py ----
class PPOLearner:
    def __init__(self, hyper_params, state_size, action_size, optim_cfg):
        self.hyper_params = hyper_params
        self.device = "cpu"
        self.is_discrete = False
        self.actor = GaussianActor(state_size, action_size)
        self.critic = Critic(state_size)
        self.actor_optim = optim.Adam(self.actor.parameters(), lr=optim_cfg.lr_actor,
                                      weight_decay=optim_cfg.weight_decay)
        self.critic_optim = optim.Adam(self.critic.parameters(), lr=optim_cfg.lr_critic,
                                       weight_decay=optim_cfg.weight_decay)

    def update_model(self, experience, epsilon):
        """Update PPO actor and critic networks"""
        states, actions, rewards, values, log_probs, next_state, masks = experience
        next_state = numpy2floattensor(next_state, self.device)
        next_value = self.critic(next_state)

        returns = compute_gae(next_value, rewards, masks, values,
                              self.hyper_params.gamma, self.hyper_params.tau)

        states = torch.cat(states)
        actions = torch.cat(actions)
        returns = torch.cat(returns).detach()
        values = torch.cat(values).detach()
        log_probs = torch.cat(log_probs).detach()
        advantages = returns - values

        if self.hyper_params.standardize_advantage:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-7)

        actor_losses, critic_losses, total_losses = [], [], []

        for state, action, old_value, old_log_prob, return_, adv in ppo_iter(
            self.hyper_params.epoch,
            self.hyper_params.batch_size,
            states,
            actions,
            values,
            log_probs,
            returns,
            advantages,
        ):
            # calculate ratios
            _, dist = self.actor(state)
            log_prob = dist.log_prob(action)
            ratio = (log_prob - old_log_prob).exp()

            # actor_loss
            surr_loss = ratio * adv
            clipped_surr_loss = torch.clamp(ratio, 1.0 - epsilon, 1.0 + epsilon) * adv
            actor_loss = -torch.min(surr_loss, clipped_surr_loss).mean()

            # critic_loss
            value = self.critic(state)
            if self.hyper_params.use_clipped_value_loss:
                value_pred_clipped = old_value + torch.clamp((value - old_value), -epsilon, epsilon)
                value_loss_clipped = (return_ - value_pred_clipped).pow(2)
                value_loss = (return_ - value).pow(2)
                critic_loss = 0.5 * torch.max(value_loss, value_loss_clipped).mean()
            else:
                critic_loss = 0.5 * (return_ - value).pow(2).mean()

            # entropy
            entropy = dist.entropy().mean()

            # total_loss
            w_value = self.hyper_params.w_value
            w_entropy = self.hyper_params.w_entropy

            total_loss = actor_loss + w_value * critic_loss - w_entropy * entropy

            # train critic
            gradient_clip_ac = self.hyper_params.gradient_clip_ac
            gradient_clip_cr = self.hyper_params.gradient_clip_cr

            self.critic_optim.zero_grad()
            total_loss.backward(retain_graph=True)
            clip_grad_norm_(self.critic.parameters(), gradient_clip_ac)
            self.critic_optim.step()

            # train actor
            self.actor_optim.zero_grad()
            total_loss.backward()  # expect: GG103
            clip_grad_norm_(self.actor.parameters(), gradient_clip_cr)
            self.actor_optim.step()

            actor_losses.append(actor_loss.item())
            critic_losses.append(critic_loss.item())
            total_losses.append(total_loss.item())

        actor_loss = sum(actor_losses) / len(actor_losses)
        critic_loss = sum(critic_losses) / len(critic_losses)
        total_loss = sum(total_losses) / len(total_losses)

        return actor_loss, critic_loss, total_loss


# ---- stand-in for rl_algorithms/ppo/agent.py (rollout) ----
class RandomWalkVecEnv:
    def __init__(self, n_envs, state_size, rng):
        self.n_envs, self.state_size, self.rng = n_envs, state_size, rng

    def reset(self):
        self.state = self.rng.randn(self.n_envs, self.state_size)
        return self.state

    def step(self, action):
        self.state = self.state + 0.1 * self.rng.randn(self.n_envs, self.state_size)
        reward = -np.abs(action).sum(axis=1)
        done = self.rng.rand(self.n_envs) < 0.1
        return self.state, reward, done, {}


def train(n_updates=2, rollout_len=8, n_envs=2, state_size=4, action_size=2):
    torch.manual_seed(0)
    np.random.seed(0)
    hyper_params = SimpleNamespace(gamma=0.99, tau=0.95, epoch=2, batch_size=4, standardize_advantage=True,
                                   use_clipped_value_loss=True, w_value=1.0, w_entropy=1e-3,
                                   gradient_clip_ac=0.5, gradient_clip_cr=1.0)
    optim_cfg = SimpleNamespace(lr_actor=3e-4, lr_critic=1e-3, weight_decay=0.0)
    learner = PPOLearner(hyper_params, state_size, action_size, optim_cfg)
    env = RandomWalkVecEnv(n_envs, state_size, np.random.RandomState(0))
    epsilon = 0.2
    state = env.reset()
    for i_update in range(n_updates):
        states, actions, rewards, values, log_probs, masks = [], [], [], [], [], []
        for _ in range(rollout_len):
            with torch.no_grad():
                state_t = numpy2floattensor(state, learner.device)
                selected_action, dist = learner.actor(state_t)
                value = learner.critic(state_t)
            states.append(state_t)
            actions.append(selected_action)
            values.append(value)
            log_probs.append(dist.log_prob(selected_action))
            next_state, reward, done, _ = env.step(selected_action.numpy())
            rewards.append(numpy2floattensor(reward, learner.device).unsqueeze(1))
            masks.append(numpy2floattensor(1 - done, learner.device).unsqueeze(1))
            state = next_state
        experience = (states, actions, rewards, values, log_probs, state, masks)
        print(learner.update_model(experience, epsilon))


if __name__ == "__main__":
    train()
