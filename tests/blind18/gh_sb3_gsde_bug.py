# Source: https://github.com/DLR-RM/stable-baselines3/commit/fbe29a72
"""DLR-RM/stable-baselines3 (then torchy_baselines), SAC with gSDE, the state the commit "Track down
autograd error" investigates: `StateDependentNoiseDistribution.sample_weights` draws the exploration
matrix once, `exploration_mat = Normal(zeros, exp(log_std)).rsample()`, when the policy is built,
and SAC's `train()` no longer resamples it before each gradient step. Every actor loss goes through
that one matrix, so the second gradient step's `actor_loss.backward()` raises "Trying to backward
through the graph a second time" (the commit's comment says so). Fix: resample the noise matrix at
each gradient step (`actor.reset_noise()`, what SB3 does today). Gym, the replay buffer and the
logger are small stand-ins; tiny sizes, CPU.
"""
import torch as th
import torch.nn as nn
from torch.distributions import Normal


class StateDependentNoiseDistribution:
    def __init__(self, action_dim, full_std=True, learn_features=False, epsilon=1e-6):
        self.distribution = None
        self.action_dim = action_dim
        self.latent_sde_dim = None
        self.weights_dist = None
        self.exploration_mat = None
        self.full_std = full_std
        self.epsilon = epsilon
        self.learn_features = learn_features

    def get_std(self, log_std):
        std = th.exp(log_std)
        if self.full_std:
            return std
        return th.ones(self.latent_sde_dim, self.action_dim).to(log_std.device) * std

    def sample_weights(self, log_std):
        std = self.get_std(log_std)
        self.weights_dist = Normal(th.zeros_like(std), std)
        self.exploration_mat = self.weights_dist.rsample()

    def proba_distribution_net(self, latent_dim, log_std_init=-2.0):
        mean_actions_net = nn.Linear(latent_dim, self.action_dim)
        self.latent_sde_dim = latent_dim
        log_std = th.ones(self.latent_sde_dim, self.action_dim) if self.full_std else th.ones(self.latent_sde_dim, 1)
        log_std = nn.Parameter(log_std * log_std_init)
        self.sample_weights(log_std)
        return mean_actions_net, log_std

    def proba_distribution(self, mean_actions, log_std, latent_sde):
        latent_sde = latent_sde if self.learn_features else latent_sde.detach()
        variance = th.mm(latent_sde ** 2, self.get_std(log_std) ** 2)
        self.distribution = Normal(mean_actions, th.sqrt(variance + self.epsilon))
        return self.sample(latent_sde), self

    def get_noise(self, latent_sde):
        latent_sde = latent_sde if self.learn_features else latent_sde.detach()
        return th.mm(latent_sde, self.exploration_mat)

    def sample(self, latent_sde):
        noise = self.get_noise(latent_sde)
        return self.distribution.mean + noise

    def log_prob(self, action):
        return self.distribution.log_prob(action).sum(dim=1)

    def log_prob_from_params(self, mean_actions, log_std, latent_sde):
        action, _ = self.proba_distribution(mean_actions, log_std, latent_sde)
        return action, self.log_prob(action)


class Actor(nn.Module):
    def __init__(self, obs_dim, action_dim, net_arch=(16, 16), use_sde=True):
        super().__init__()
        self.use_sde = use_sde
        self.latent_pi = nn.Sequential(nn.Linear(obs_dim, net_arch[0]), nn.ReLU(),
                                       nn.Linear(net_arch[0], net_arch[1]), nn.ReLU())
        self.action_dist = StateDependentNoiseDistribution(action_dim, learn_features=True)
        self.mu, self.log_std = self.action_dist.proba_distribution_net(latent_dim=net_arch[-1])
        self.optimizer = th.optim.Adam(self.parameters(), lr=3e-4)

    def reset_noise(self):
        self.action_dist.sample_weights(self.log_std)

    def action_log_prob(self, obs):
        latent_pi = self.latent_pi(obs)
        mean_actions = self.mu(latent_pi)
        return self.action_dist.log_prob_from_params(mean_actions, self.log_std, latent_pi)


class Critic(nn.Module):
    def __init__(self, obs_dim, action_dim):
        super().__init__()
        self.q1 = nn.Sequential(nn.Linear(obs_dim + action_dim, 16), nn.ReLU(), nn.Linear(16, 1))
        self.q2 = nn.Sequential(nn.Linear(obs_dim + action_dim, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, obs, action):
        qvalue_input = th.cat([obs, action], dim=1)
        return self.q1(qvalue_input), self.q2(qvalue_input)


class ReplayBuffer:
    def __init__(self, obs_dim, action_dim, size=64):
        self.obs = th.randn(size, obs_dim)
        self.actions = th.randn(size, action_dim)
        self.next_obs = th.randn(size, obs_dim)
        self.dones = th.zeros(size, 1)
        self.rewards = th.randn(size, 1)

    def sample(self, batch_size):
        idx = th.randint(0, self.obs.shape[0], (batch_size,))
        return self.obs[idx], self.actions[idx], self.next_obs[idx], self.dones[idx], self.rewards[idx]


class SAC:
    def __init__(self, obs_dim=5, action_dim=2, use_sde=True, gamma=0.99, tau=0.005, ent_coef=0.1):
        self.use_sde = use_sde
        self.gamma = gamma
        self.tau = tau
        self.ent_coef = ent_coef
        self.actor = Actor(obs_dim, action_dim, use_sde=use_sde)
        self.critic = Critic(obs_dim, action_dim)
        self.critic_target = Critic(obs_dim, action_dim)
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.critic_optimizer = th.optim.Adam(self.critic.parameters(), lr=3e-4)
        self.replay_buffer = ReplayBuffer(obs_dim, action_dim)

    def train(self, gradient_steps, batch_size=16):
        for gradient_step in range(gradient_steps):
            obs, action_batch, next_obs, done, reward = self.replay_buffer.sample(batch_size)

            # Action by the current actor for the sampled state
            action_pi, log_prob = self.actor.action_log_prob(obs)
            log_prob = log_prob.reshape(-1, 1)
            ent_coef = self.ent_coef

            with th.no_grad():
                next_action, next_log_prob = self.actor.action_log_prob(next_obs)
                target_q1, target_q2 = self.critic_target(next_obs, next_action)
                target_q = th.min(target_q1, target_q2)
                target_q = reward + (1 - done) * self.gamma * target_q
                target_q = target_q - ent_coef * next_log_prob.reshape(-1, 1)

            current_q1, current_q2 = self.critic(obs, action_batch)
            critic_loss = 0.5 * (nn.functional.mse_loss(current_q1, target_q)
                                 + nn.functional.mse_loss(current_q2, target_q))
            self.critic_optimizer.zero_grad()
            critic_loss.backward()
            self.critic_optimizer.step()

            qf1_pi, qf2_pi = self.critic.forward(obs, action_pi)
            min_qf_pi = th.min(qf1_pi, qf2_pi)
            actor_loss = (ent_coef * log_prob - min_qf_pi).mean()

            self.actor.optimizer.zero_grad()
            actor_loss.backward()  # expect: GG101
            self.actor.optimizer.step()

            for param, target_param in zip(self.critic.parameters(), self.critic_target.parameters()):
                target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)


if __name__ == "__main__":
    th.manual_seed(0)
    model = SAC()
    model.train(gradient_steps=3)
    print("done")
