# Source: https://github.com/microsoft/oac-explore/issues/27
"""Optimistic Actor Critic's SACTrainer with the fix the issue gives: q_new_actions and the policy
loss are computed after the qf1 and qf2 optimizer steps, so the policy loss's graph saves the
updated Q weights (the issue's snippet also passes retain_graph=True to the Q backwards; nothing
walks those graphs again, so it is left out). Same tanh-Gaussian policy, FlattenMlp Q networks and
random replay batches."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class FlattenMlp(nn.Module):
    def __init__(self, input_size, output_size, hidden_size=32):
        super().__init__()
        self.fc1 = nn.Linear(input_size, hidden_size)
        self.fc2 = nn.Linear(hidden_size, hidden_size)
        self.last_fc = nn.Linear(hidden_size, output_size)

    def forward(self, *inputs):
        h = torch.cat(inputs, dim=1)
        h = F.relu(self.fc1(h))
        h = F.relu(self.fc2(h))
        return self.last_fc(h)


class TanhGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, action_dim, hidden_size=32):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, hidden_size)
        self.fc2 = nn.Linear(hidden_size, hidden_size)
        self.last_fc = nn.Linear(hidden_size, action_dim)
        self.last_fc_log_std = nn.Linear(hidden_size, action_dim)

    def forward(self, obs, reparameterize=True, return_log_prob=True):
        h = F.relu(self.fc2(F.relu(self.fc1(obs))))
        mean = self.last_fc(h)
        log_std = torch.clamp(self.last_fc_log_std(h), -20, 2)
        std = torch.exp(log_std)
        normal = torch.distributions.Normal(mean, std)
        pre_tanh_value = normal.rsample()
        action = torch.tanh(pre_tanh_value)
        log_prob = normal.log_prob(pre_tanh_value) - torch.log(1 - action * action + 1e-6)
        log_prob = log_prob.sum(dim=1, keepdim=True)
        return action, mean, log_std, log_prob


class SACTrainer:
    def __init__(self, policy, qf1, qf2, target_qf1, target_qf2, discount=0.99, reward_scale=1.0,
                 policy_lr=3e-4, qf_lr=3e-4, soft_target_tau=5e-3):
        self.policy = policy
        self.qf1, self.qf2 = qf1, qf2
        self.target_qf1, self.target_qf2 = target_qf1, target_qf2
        self.soft_target_tau = soft_target_tau
        self.qf_criterion = nn.MSELoss()
        self.policy_optimizer = torch.optim.Adam(self.policy.parameters(), lr=policy_lr)
        self.qf1_optimizer = torch.optim.Adam(self.qf1.parameters(), lr=qf_lr)
        self.qf2_optimizer = torch.optim.Adam(self.qf2.parameters(), lr=qf_lr)
        self.discount = discount
        self.reward_scale = reward_scale

    def train_from_torch(self, batch):
        rewards = batch['rewards']
        terminals = batch['terminals']
        obs = batch['observations']
        actions = batch['actions']
        next_obs = batch['next_observations']

        """
        Policy and Alpha Loss
        """
        new_obs_actions, policy_mean, policy_log_std, log_pi = self.policy(
            obs, reparameterize=True, return_log_prob=True,
        )
        alpha = 1

        """
        QF Loss
        """
        q1_pred = self.qf1(obs, actions)
        q2_pred = self.qf2(obs, actions)
        new_next_actions, _, _, new_log_pi = self.policy(
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
        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()

        self.qf2_optimizer.zero_grad()
        qf2_loss.backward()
        self.qf2_optimizer.step()

        q_new_actions = torch.min(
            self.qf1(obs, new_obs_actions),
            self.qf2(obs, new_obs_actions),
        )
        policy_loss = (alpha * log_pi - q_new_actions).mean()

        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()

        self.soft_update(self.qf1, self.target_qf1)
        self.soft_update(self.qf2, self.target_qf2)
        return policy_loss.item(), qf1_loss.item(), qf2_loss.item()

    def soft_update(self, source, target):
        with torch.no_grad():
            for target_param, param in zip(target.parameters(), source.parameters()):
                target_param.mul_(1.0 - self.soft_target_tau).add_(param, alpha=self.soft_target_tau)


def random_batch(batch_size=16, obs_dim=5, action_dim=2):
    return {
        'observations': torch.randn(batch_size, obs_dim),
        'actions': torch.rand(batch_size, action_dim) * 2 - 1,
        'rewards': torch.randn(batch_size, 1),
        'terminals': (torch.rand(batch_size, 1) < 0.1).float(),
        'next_observations': torch.randn(batch_size, obs_dim),
    }


obs_dim, action_dim = 5, 2
qf1 = FlattenMlp(obs_dim + action_dim, 1)
qf2 = FlattenMlp(obs_dim + action_dim, 1)
trainer = SACTrainer(TanhGaussianPolicy(obs_dim, action_dim), qf1, qf2, copy.deepcopy(qf1), copy.deepcopy(qf2))
for it in range(3):
    print(trainer.train_from_torch(random_batch(obs_dim=obs_dim, action_dim=action_dim)))
