# Source: https://github.com/Farama-Foundation/D4RL/issues/57
"""D4RL's BEAR example (rlkit's BEARTrainer, mode='auto'), fixed (the thread gives no fix; this is
the right one): the Lagrange multiplier's loss is built from the detached MMD,
`-(log_alpha.exp() * (mmd_loss.detach() - target_mmd_thresh)).mean()`, so its backward reaches
log_alpha only and never walks the policy after the policy's step; the policy loss's backward no
longer retains its graph. rlkit's TanhGaussianPolicy, VAE, FlattenMlp critics, ptu helpers and the
hdf5 replay data are small stand-ins written here.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def soft_update_from_to(source, target, tau):
    for target_param, param in zip(target.parameters(), source.parameters()):
        target_param.data.copy_(target_param.data * (1.0 - tau) + param.data * tau)


def get_numpy(tensor):
    return tensor.to('cpu').detach().numpy()


class FlattenMlp(nn.Module):
    def __init__(self, input_size, output_size, hidden_sizes):
        super().__init__()
        sizes = [input_size] + list(hidden_sizes)
        self.fcs = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])
        self.last_fc = nn.Linear(sizes[-1], output_size)

    def forward(self, *inputs):
        h = torch.cat(inputs, dim=1)
        for fc in self.fcs:
            h = F.relu(fc(h))
        return self.last_fc(h)


class TanhGaussianPolicy(nn.Module):
    def __init__(self, obs_dim, action_dim, hidden_sizes):
        super().__init__()
        sizes = [obs_dim] + list(hidden_sizes)
        self.fcs = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])
        self.last_fc = nn.Linear(sizes[-1], action_dim)
        self.last_fc_log_std = nn.Linear(sizes[-1], action_dim)

    def forward(self, obs, reparameterize=True, deterministic=False, return_log_prob=False):
        h = obs
        for fc in self.fcs:
            h = F.relu(fc(h))
        mean = self.last_fc(h)
        log_std = self.last_fc_log_std(h).clamp(-20, 2)
        std = log_std.exp()
        pre_tanh_value = mean + std * torch.randn_like(mean)
        action = torch.tanh(pre_tanh_value)
        log_prob = None
        if return_log_prob:
            log_prob = (-((pre_tanh_value - mean) ** 2) / (2 * std ** 2) - log_std).sum(1, keepdim=True)
        return action, mean, log_std, log_prob, None, std, None, pre_tanh_value


class VAEPolicy(nn.Module):
    def __init__(self, obs_dim, action_dim, hidden, latent_dim):
        super().__init__()
        self.e1, self.e2 = nn.Linear(obs_dim + action_dim, hidden), nn.Linear(hidden, hidden)
        self.mean, self.log_std = nn.Linear(hidden, latent_dim), nn.Linear(hidden, latent_dim)
        self.d1, self.d2 = nn.Linear(obs_dim + latent_dim, hidden), nn.Linear(hidden, hidden)
        self.d3 = nn.Linear(hidden, action_dim)
        self.latent_dim = latent_dim

    def forward(self, state, action):
        z = F.relu(self.e2(F.relu(self.e1(torch.cat([state, action], 1)))))
        mean = self.mean(z)
        std = self.log_std(z).clamp(-4, 15).exp()
        z = mean + std * torch.randn_like(std)
        return self.decode(state, z), mean, std

    def decode(self, state, z=None):
        if z is None:
            z = torch.randn((state.shape[0], self.latent_dim)).clamp(-0.5, 0.5)
        a = F.relu(self.d2(F.relu(self.d1(torch.cat([state, z], 1)))))
        return torch.tanh(self.d3(a))

    def decode_multiple(self, state, z=None, num_decode=10):
        if z is None:
            z = torch.randn((state.shape[0], num_decode, self.latent_dim)).clamp(-0.5, 0.5)
        s = state.unsqueeze(0).repeat(num_decode, 1, 1).permute(1, 0, 2)
        a = F.relu(self.d2(F.relu(self.d1(torch.cat([s, z], 2)))))
        raw = self.d3(a)
        return torch.tanh(raw), raw


class BEARTrainer:
    def __init__(self, policy, qf1, qf2, target_qf1, target_qf2, vae, discount=0.99, reward_scale=1.0,
                 policy_lr=1e-4, qf_lr=3e-4, soft_target_tau=5e-3, target_update_period=1,
                 mode='auto', kernel_choice='laplacian', policy_update_style='0', mmd_sigma=20.0,
                 target_mmd_thresh=0.05, num_samples_mmd_match=4):
        self.policy, self.qf1, self.qf2 = policy, qf1, qf2
        self.target_qf1, self.target_qf2, self.vae = target_qf1, target_qf2, vae
        self.soft_target_tau, self.target_update_period = soft_target_tau, target_update_period
        self.qf_criterion = nn.MSELoss()
        self.policy_optimizer = torch.optim.Adam(self.policy.parameters(), lr=policy_lr)
        self.qf1_optimizer = torch.optim.Adam(self.qf1.parameters(), lr=qf_lr)
        self.qf2_optimizer = torch.optim.Adam(self.qf2.parameters(), lr=qf_lr)
        self.vae_optimizer = torch.optim.Adam(self.vae.parameters(), lr=3e-4)
        self.mode = mode
        if self.mode == 'auto':
            self.log_alpha = torch.zeros(1, requires_grad=True)
            self.alpha_optimizer = torch.optim.Adam([self.log_alpha], lr=1e-3)
        self.mmd_sigma, self.kernel_choice = mmd_sigma, kernel_choice
        self.num_samples_mmd_match = num_samples_mmd_match
        self.policy_update_style = policy_update_style
        self.target_mmd_thresh = target_mmd_thresh
        self.discount, self.reward_scale = discount, reward_scale
        self._n_train_steps_total = 0
        self.eval_statistics = {}

    def mmd_loss_laplacian(self, samples1, samples2, sigma=0.2):
        diff_x_x = samples1.unsqueeze(2) - samples1.unsqueeze(1)
        diff_x_x = torch.mean((-(diff_x_x.abs()).sum(-1) / (2.0 * sigma)).exp(), dim=(1, 2))
        diff_x_y = samples1.unsqueeze(2) - samples2.unsqueeze(1)
        diff_x_y = torch.mean((-(diff_x_y.abs()).sum(-1) / (2.0 * sigma)).exp(), dim=(1, 2))
        diff_y_y = samples2.unsqueeze(2) - samples2.unsqueeze(1)
        diff_y_y = torch.mean((-(diff_y_y.abs()).sum(-1) / (2.0 * sigma)).exp(), dim=(1, 2))
        return (diff_x_x + diff_y_y - 2.0 * diff_x_y + 1e-6).sqrt()

    def train_from_torch(self, batch):
        rewards, terminals = batch['rewards'], batch['terminals']
        obs, actions, next_obs = batch['observations'], batch['actions'], batch['next_observations']

        # Behavior clone a policy
        recon, mean, std = self.vae(obs, actions)
        recon_loss = self.qf_criterion(recon, actions)
        kl_loss = -0.5 * (1 + torch.log(std.pow(2)) - mean.pow(2) - std.pow(2)).mean()
        vae_loss = recon_loss + 0.5 * kl_loss
        self.vae_optimizer.zero_grad()
        vae_loss.backward()
        self.vae_optimizer.step()

        # Critic Training
        with torch.no_grad():
            state_rep = next_obs.unsqueeze(1).repeat(1, 10, 1).view(next_obs.shape[0] * 10, next_obs.shape[1])
            action_rep = self.policy(state_rep)[0]
            target_qf1 = self.target_qf1(state_rep, action_rep)
            target_qf2 = self.target_qf2(state_rep, action_rep)
            target_Q = 0.75 * torch.min(target_qf1, target_qf2) + 0.25 * torch.max(target_qf1, target_qf2)
            target_Q = target_Q.view(next_obs.shape[0], -1).max(1)[0].view(-1, 1)
            target_Q = self.reward_scale * rewards + (1.0 - terminals) * self.discount * target_Q
        qf1_pred = self.qf1(obs, actions)
        qf2_pred = self.qf2(obs, actions)
        qf1_loss = (qf1_pred - target_Q.detach()).pow(2).mean()
        qf2_loss = (qf2_pred - target_Q.detach()).pow(2).mean()

        # Actor Training
        sampled_actions, raw_sampled_actions = self.vae.decode_multiple(obs, num_decode=self.num_samples_mmd_match)
        actor_samples, _, _, _, _, _, _, raw_actor_actions = self.policy(
            obs.unsqueeze(1).repeat(1, self.num_samples_mmd_match, 1).view(-1, obs.shape[1]), return_log_prob=True)
        actor_samples = actor_samples.view(obs.shape[0], self.num_samples_mmd_match, actions.shape[1])
        raw_actor_actions = raw_actor_actions.view(obs.shape[0], self.num_samples_mmd_match, actions.shape[1])
        mmd_loss = self.mmd_loss_laplacian(raw_sampled_actions, raw_actor_actions, sigma=self.mmd_sigma)

        q_val1 = self.qf1(obs, actor_samples[:, 0, :])
        q_val2 = self.qf2(obs, actor_samples[:, 0, :])
        policy_loss = torch.min(q_val1, q_val2)[:, 0]
        if self._n_train_steps_total >= 40000:
            if self.mode == 'auto':
                policy_loss = (-policy_loss + self.log_alpha.exp() * (mmd_loss - self.target_mmd_thresh)).mean()
            else:
                policy_loss = (-policy_loss + 100 * mmd_loss).mean()
        else:
            if self.mode == 'auto':
                policy_loss = (self.log_alpha.exp() * (mmd_loss - self.target_mmd_thresh)).mean()
            else:
                policy_loss = 100 * mmd_loss.mean()

        # Update Networks
        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()
        self.qf2_optimizer.zero_grad()
        qf2_loss.backward()
        self.qf2_optimizer.step()

        self.policy_optimizer.zero_grad()
        if self.mode == 'auto':
            policy_loss.backward()
        self.policy_optimizer.step()

        if self.mode == 'auto':
            alpha_loss = -(self.log_alpha.exp() * (mmd_loss.detach() - self.target_mmd_thresh)).mean()
            self.alpha_optimizer.zero_grad()
            alpha_loss.backward()
            self.alpha_optimizer.step()
            self.log_alpha.data.clamp_(min=-5.0, max=10.0)

        if self._n_train_steps_total % self.target_update_period == 0:
            soft_update_from_to(self.qf1, self.target_qf1, self.soft_target_tau)
            soft_update_from_to(self.qf2, self.target_qf2, self.soft_target_tau)
        self.eval_statistics['QF1 Loss'] = np.mean(get_numpy(qf1_loss))
        self.eval_statistics['Policy Loss'] = np.mean(get_numpy(policy_loss))
        self._n_train_steps_total += 1


def load_hdf5_standin(obs_dim=17, action_dim=6, n=64):
    """Stand-in for the d4rl dataset loaded into the replay buffer."""
    return {'observations': torch.randn(n, obs_dim), 'actions': torch.rand(n, action_dim) * 2 - 1,
            'rewards': torch.randn(n, 1), 'terminals': torch.zeros(n, 1),
            'next_observations': torch.randn(n, obs_dim)}


obs_dim, action_dim, M = 17, 6, 32
qf1, qf2, target_qf1, target_qf2 = (FlattenMlp(obs_dim + action_dim, 1, [M, M]) for _ in range(4))
policy = TanhGaussianPolicy(obs_dim, action_dim, [M, M])
vae = VAEPolicy(obs_dim, action_dim, M, latent_dim=action_dim * 2)
trainer = BEARTrainer(policy, qf1, qf2, target_qf1, target_qf2, vae, mode='auto', mmd_sigma=20.0)
data = load_hdf5_standin(obs_dim, action_dim)
for epoch in range(1):
    for step in range(3):
        idx = torch.randint(0, 64, (8,))
        trainer.train_from_torch({k: v[idx] for k, v in data.items()})
