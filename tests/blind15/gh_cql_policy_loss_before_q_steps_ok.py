# Source: https://github.com/aviralkumar2907/CQL/issues/5
"""CQL's trainer with the fix the thread's first option names (and the one rlkit's later trainers
use): the policy and alpha are updated before the QF losses are formed, so `policy_loss.backward()`
walks qf1/qf2 before any Q step; the Q losses are then built from the updated policy. The
`retain_graph=True` of qf2's backward, which no later call needed, is dropped (qf1's is kept: qf2's
CQL term walks the same sampled policy actions). rlkit stand-ins as in the `_bug`.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions import Normal


# ---- rlkit stand-ins ----
class FlattenMlp(nn.Module):
    def __init__(self, input_size, output_size, hidden_sizes):
        super().__init__()
        layers, in_size = [], input_size
        for h in hidden_sizes:
            layers += [nn.Linear(in_size, h), nn.ReLU()]
            in_size = h
        self.fcs = nn.Sequential(*layers)
        self.last_fc = nn.Linear(in_size, output_size)

    def forward(self, *inputs):
        flat_inputs = torch.cat(inputs, dim=1)
        return self.last_fc(self.fcs(flat_inputs))


class TanhGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, action_dim, hidden_sizes):
        super().__init__()
        self.body = FlattenMlp(obs_dim, hidden_sizes[-1], hidden_sizes[:-1])
        self.mean = nn.Linear(hidden_sizes[-1], action_dim)
        self.log_std = nn.Linear(hidden_sizes[-1], action_dim)

    def forward(self, obs, reparameterize=True, return_log_prob=True):
        h = torch.relu(self.body(obs))
        mean = self.mean(h)
        log_std = torch.clamp(self.log_std(h), -20, 2)
        std = log_std.exp()
        normal = Normal(mean, std)
        pre_tanh = normal.rsample() if reparameterize else normal.sample()
        action = torch.tanh(pre_tanh)
        log_prob = normal.log_prob(pre_tanh) - torch.log(1 - action.pow(2) + 1e-6)
        log_prob = log_prob.sum(dim=1, keepdim=True)
        return action, mean, log_std, log_prob

    def log_prob(self, obs, actions):
        h = torch.relu(self.body(obs))
        mean, log_std = self.mean(h), torch.clamp(self.log_std(h), -20, 2)
        pre_tanh = torch.atanh(actions.clamp(-0.999, 0.999))
        lp = Normal(mean, log_std.exp()).log_prob(pre_tanh) - torch.log(1 - actions.pow(2) + 1e-6)
        return lp.sum(-1)


class CQLTrainer(object):
    def __init__(self, env_action_dim, policy, qf1, qf2, target_qf1, target_qf2,
                 discount=0.99, reward_scale=1.0, policy_lr=1e-3, qf_lr=1e-3,
                 use_automatic_entropy_tuning=True, policy_eval_start=0,
                 num_random=4, min_q_weight=1.0, temp=1.0):
        self.policy, self.qf1, self.qf2 = policy, qf1, qf2
        self.target_qf1, self.target_qf2 = target_qf1, target_qf2
        self.use_automatic_entropy_tuning = use_automatic_entropy_tuning
        self.target_entropy = -float(env_action_dim)
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha_optimizer = optim.Adam([self.log_alpha], lr=policy_lr)
        self.policy_optimizer = optim.Adam(self.policy.parameters(), lr=policy_lr)
        self.qf1_optimizer = optim.Adam(self.qf1.parameters(), lr=qf_lr)
        self.qf2_optimizer = optim.Adam(self.qf2.parameters(), lr=qf_lr)
        self.qf_criterion = nn.MSELoss()
        self.discount, self.reward_scale = discount, reward_scale
        self.policy_eval_start = policy_eval_start
        self.num_random, self.min_q_weight, self.temp = num_random, min_q_weight, temp
        self._current_epoch = 0
        self.eval_statistics = {}

    def _get_tensor_values(self, obs, actions, network=None):
        action_shape = actions.shape[0]
        obs_shape = obs.shape[0]
        num_repeat = int(action_shape / obs_shape)
        obs_temp = obs.unsqueeze(1).repeat(1, num_repeat, 1).view(obs.shape[0] * num_repeat, obs.shape[1])
        preds = network(obs_temp, actions)
        return preds.view(obs.shape[0], num_repeat, 1)

    def _get_policy_actions(self, obs, num_actions, network=None):
        obs_temp = obs.unsqueeze(1).repeat(1, num_actions, 1).view(obs.shape[0] * num_actions, obs.shape[1])
        new_obs_actions, _, _, new_obs_log_pi = network(obs_temp, reparameterize=True, return_log_prob=True)
        return new_obs_actions, new_obs_log_pi.view(obs.shape[0], num_actions, 1)

    def train_from_torch(self, batch):
        self._current_epoch += 1
        rewards = batch['rewards']
        terminals = batch['terminals']
        obs = batch['observations']
        actions = batch['actions']
        next_obs = batch['next_observations']

        """
        Policy and Alpha Loss
        """
        new_obs_actions, policy_mean, policy_log_std, log_pi = self.policy(
            obs, reparameterize=True, return_log_prob=True)
        if self.use_automatic_entropy_tuning:
            alpha_loss = -(self.log_alpha * (log_pi + self.target_entropy).detach()).mean()
            self.alpha_optimizer.zero_grad()
            alpha_loss.backward()
            self.alpha_optimizer.step()
            alpha = self.log_alpha.exp()
        else:
            alpha_loss = 0
            alpha = 1

        q_new_actions = torch.min(self.qf1(obs, new_obs_actions), self.qf2(obs, new_obs_actions))
        policy_loss = (alpha * log_pi - q_new_actions).mean()
        if self._current_epoch < self.policy_eval_start:
            policy_log_prob = self.policy.log_prob(obs, actions)
            policy_loss = (alpha * log_pi - policy_log_prob).mean()

        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()

        """
        QF Loss
        """
        q1_pred = self.qf1(obs, actions)
        q2_pred = self.qf2(obs, actions)
        new_next_actions, _, _, new_log_pi = self.policy(next_obs, reparameterize=True, return_log_prob=True)
        target_q_values = torch.min(self.target_qf1(next_obs, new_next_actions),
                                    self.target_qf2(next_obs, new_next_actions))
        q_target = self.reward_scale * rewards + (1. - terminals) * self.discount * target_q_values
        q_target = q_target.detach()
        qf1_loss = self.qf_criterion(q1_pred, q_target)
        qf2_loss = self.qf_criterion(q2_pred, q_target)

        ## add CQL
        random_actions_tensor = torch.FloatTensor(q2_pred.shape[0] * self.num_random, actions.shape[-1]).uniform_(-1, 1)
        curr_actions_tensor, curr_log_pis = self._get_policy_actions(obs, num_actions=self.num_random, network=self.policy)
        new_curr_actions_tensor, new_log_pis = self._get_policy_actions(next_obs, num_actions=self.num_random, network=self.policy)
        q1_rand = self._get_tensor_values(obs, random_actions_tensor, network=self.qf1)
        q2_rand = self._get_tensor_values(obs, random_actions_tensor, network=self.qf2)
        q1_curr_actions = self._get_tensor_values(obs, curr_actions_tensor, network=self.qf1)
        q2_curr_actions = self._get_tensor_values(obs, curr_actions_tensor, network=self.qf2)
        q1_next_actions = self._get_tensor_values(obs, new_curr_actions_tensor, network=self.qf1)
        q2_next_actions = self._get_tensor_values(obs, new_curr_actions_tensor, network=self.qf2)

        random_density = np.log(0.5 ** curr_actions_tensor.shape[-1])
        cat_q1 = torch.cat([q1_rand - random_density, q1_next_actions - new_log_pis.detach(),
                            q1_curr_actions - curr_log_pis.detach()], 1)
        cat_q2 = torch.cat([q2_rand - random_density, q2_next_actions - new_log_pis.detach(),
                            q2_curr_actions - curr_log_pis.detach()], 1)
        min_qf1_loss = torch.logsumexp(cat_q1 / self.temp, dim=1).mean() * self.min_q_weight * self.temp
        min_qf2_loss = torch.logsumexp(cat_q2 / self.temp, dim=1).mean() * self.min_q_weight * self.temp
        min_qf1_loss = min_qf1_loss - q1_pred.mean() * self.min_q_weight
        min_qf2_loss = min_qf2_loss - q2_pred.mean() * self.min_q_weight
        qf1_loss = qf1_loss + min_qf1_loss
        qf2_loss = qf2_loss + min_qf2_loss

        """
        Update networks
        """
        self.qf1_optimizer.zero_grad()
        qf1_loss.backward(retain_graph=True)
        self.qf1_optimizer.step()

        self.qf2_optimizer.zero_grad()
        qf2_loss.backward()
        self.qf2_optimizer.step()

        self.eval_statistics['QF1 Loss'] = qf1_loss.item()
        self.eval_statistics['Policy Loss'] = policy_loss.item()


def random_batch(batch_size=8, obs_dim=4, action_dim=2):
    return {
        'observations': torch.randn(batch_size, obs_dim),
        'actions': torch.rand(batch_size, action_dim) * 2 - 1,
        'rewards': torch.randn(batch_size, 1),
        'terminals': (torch.rand(batch_size, 1) > 0.9).float(),
        'next_observations': torch.randn(batch_size, obs_dim),
    }


if __name__ == "__main__":
    obs_dim, action_dim, M = 4, 2, 16
    qf1 = FlattenMlp(obs_dim + action_dim, 1, [M, M])
    qf2 = FlattenMlp(obs_dim + action_dim, 1, [M, M])
    target_qf1 = FlattenMlp(obs_dim + action_dim, 1, [M, M])
    target_qf2 = FlattenMlp(obs_dim + action_dim, 1, [M, M])
    policy = TanhGaussianPolicy(obs_dim, action_dim, [M, M])
    trainer = CQLTrainer(action_dim, policy, qf1, qf2, target_qf1, target_qf2)
    for it in range(3):
        trainer.train_from_torch(random_batch(obs_dim=obs_dim, action_dim=action_dim))
        print(it, trainer.eval_statistics)
