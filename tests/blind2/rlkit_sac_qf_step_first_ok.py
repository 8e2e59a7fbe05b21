# Source: https://github.com/rail-berkeley/rlkit/pull/109
"""rlkit's SACTrainer.train_from_torch after PR #109 ("Optimize actor before the critic"): the policy
is updated first, while qf1 and qf2 still hold the weights its loss saved, and the Q-functions are
stepped after it. A random batch stands in for the replay buffer; TanhNormal is written out with
torch.distributions."""
import numpy as np
import torch
import torch.optim as optim
from torch import nn as nn

LOG_SIG_MAX = 2
LOG_SIG_MIN = -20


class Mlp(nn.Module):
    def __init__(self, hidden_sizes, output_size, input_size, hidden_activation=torch.relu):
        super().__init__()
        self.hidden_activation = hidden_activation
        self.fcs = nn.ModuleList()
        in_size = input_size
        for next_size in hidden_sizes:
            self.fcs.append(nn.Linear(in_size, next_size))
            in_size = next_size
        self.last_fc = nn.Linear(in_size, output_size)

    def forward(self, input):
        h = input
        for fc in self.fcs:
            h = self.hidden_activation(fc(h))
        return self.last_fc(h)


class FlattenMlp(Mlp):
    def forward(self, *inputs, **kwargs):
        flat_inputs = torch.cat(inputs, dim=1)
        return super().forward(flat_inputs, **kwargs)


class TanhGaussianPolicy(Mlp):
    def __init__(self, hidden_sizes, obs_dim, action_dim):
        super().__init__(hidden_sizes, input_size=obs_dim, output_size=action_dim)
        self.last_fc_log_std = nn.Linear(hidden_sizes[-1], action_dim)

    def forward(self, obs, reparameterize=True, return_log_prob=False):
        h = obs
        for fc in self.fcs:
            h = self.hidden_activation(fc(h))
        mean = self.last_fc(h)
        log_std = torch.clamp(self.last_fc_log_std(h), LOG_SIG_MIN, LOG_SIG_MAX)
        std = torch.exp(log_std)
        normal = torch.distributions.Normal(mean, std)
        pre_tanh_value = normal.rsample() if reparameterize else normal.sample()
        action = torch.tanh(pre_tanh_value)
        log_prob = normal.log_prob(pre_tanh_value) - torch.log(1 - action * action + 1e-6)
        log_prob = log_prob.sum(dim=1, keepdim=True)
        return action, mean, log_std, log_prob, None, std, None, pre_tanh_value


def soft_update_from_to(source, target, tau):
    for target_param, param in zip(target.parameters(), source.parameters()):
        target_param.data.copy_(target_param.data * (1.0 - tau) + param.data * tau)


class SACTrainer(object):
    def __init__(self, action_dim, policy, qf1, qf2, target_qf1, target_qf2, discount=0.99,
                 reward_scale=1.0, policy_lr=1e-3, qf_lr=1e-3, optimizer_class=optim.Adam,
                 soft_target_tau=1e-2, target_update_period=1, use_automatic_entropy_tuning=True):
        self.policy = policy
        self.qf1, self.qf2 = qf1, qf2
        self.target_qf1, self.target_qf2 = target_qf1, target_qf2
        self.soft_target_tau = soft_target_tau
        self.target_update_period = target_update_period

        self.use_automatic_entropy_tuning = use_automatic_entropy_tuning
        if self.use_automatic_entropy_tuning:
            self.target_entropy = -np.prod((action_dim,)).item()  # heuristic value from Tuomas
            self.log_alpha = torch.zeros(1, requires_grad=True)
            self.alpha_optimizer = optimizer_class([self.log_alpha], lr=policy_lr)

        self.qf_criterion = nn.MSELoss()
        self.policy_optimizer = optimizer_class(self.policy.parameters(), lr=policy_lr)
        self.qf1_optimizer = optimizer_class(self.qf1.parameters(), lr=qf_lr)
        self.qf2_optimizer = optimizer_class(self.qf2.parameters(), lr=qf_lr)

        self.discount = discount
        self.reward_scale = reward_scale
        self._n_train_steps_total = 0

    def train_from_torch(self, batch):
        rewards = batch['rewards']
        terminals = batch['terminals']
        obs = batch['observations']
        actions = batch['actions']
        next_obs = batch['next_observations']

        """
        Policy and Alpha Loss
        """
        new_obs_actions, policy_mean, policy_log_std, log_pi, *_ = self.policy(
            obs, reparameterize=True, return_log_prob=True,
        )
        if self.use_automatic_entropy_tuning:
            alpha_loss = -(self.log_alpha * (log_pi + self.target_entropy).detach()).mean()
            self.alpha_optimizer.zero_grad()
            alpha_loss.backward()
            self.alpha_optimizer.step()
            alpha = self.log_alpha.exp()
        else:
            alpha_loss = 0
            alpha = 1

        q_new_actions = torch.min(
            self.qf1(obs, new_obs_actions),
            self.qf2(obs, new_obs_actions),
        )
        policy_loss = (alpha*log_pi - q_new_actions).mean()

        """
        QF Loss
        """
        q1_pred = self.qf1(obs, actions)
        q2_pred = self.qf2(obs, actions)
        # Make sure policy accounts for squashing functions like tanh correctly!
        new_next_actions, _, _, new_log_pi, *_ = self.policy(
            next_obs, reparameterize=True, return_log_prob=True,
        )
        target_q_values = torch.min(
            self.target_qf1(next_obs, new_next_actions),
            self.target_qf2(next_obs, new_next_actions),
        ) - alpha * new_log_pi

        q_target = self.reward_scale * rewards + (1. - terminals) * self.discount * target_q_values
        qf1_loss = self.qf_criterion(q1_pred, q_target.detach())
        qf2_loss = self.qf_criterion(q2_pred, q_target.detach())

        """
        Update networks
        """
        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()

        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()

        self.qf2_optimizer.zero_grad()
        qf2_loss.backward()
        self.qf2_optimizer.step()

        """
        Soft Updates
        """
        if self._n_train_steps_total % self.target_update_period == 0:
            soft_update_from_to(self.qf1, self.target_qf1, self.soft_target_tau)
            soft_update_from_to(self.qf2, self.target_qf2, self.soft_target_tau)
        self._n_train_steps_total += 1


obs_dim, action_dim, M = 3, 2, 16
qf1, qf2, target_qf1, target_qf2 = (FlattenMlp([M, M], 1, obs_dim + action_dim) for _ in range(4))
policy = TanhGaussianPolicy([M, M], obs_dim, action_dim)
trainer = SACTrainer(action_dim, policy, qf1, qf2, target_qf1, target_qf2)
for _ in range(2):
    batch = dict(rewards=torch.randn(8, 1), terminals=torch.zeros(8, 1), observations=torch.randn(8, obs_dim),
                 actions=torch.rand(8, action_dim) * 2 - 1, next_observations=torch.randn(8, obs_dim))
    trainer.train_from_torch(batch)
