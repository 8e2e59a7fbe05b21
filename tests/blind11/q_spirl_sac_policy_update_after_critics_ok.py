# Source: https://github.com/clvrai/spirl/issues/15
"""Fixed twin of q_spirl_sac_policy_update_after_critics_bug.py: the policy is updated on its loss
before the critic optimizers step, as in the maintainers' fix (commit fc84d16, pointed to in the
thread), so the policy loss's backward sees the critic weights it was computed with. SPiRL's
AttrDict, replay buffer, TensorModule and networks are small stand-ins.
"""
import torch
import torch.nn as nn


class AttrDict(dict):
    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


class TensorModule(nn.Module):
    def __init__(self, t):
        super().__init__()
        self.t = nn.Parameter(t)

    def forward(self):
        return self.t


class Critic(nn.Module):
    def __init__(self, obs_dim, action_dim, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + action_dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, obs, action):
        return AttrDict(q=self.net(torch.cat([obs, action], dim=-1)))


class Policy(nn.Module):
    def __init__(self, obs_dim, action_dim, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, 2 * action_dim))

    def forward(self, obs):
        mean, log_std = self.net(obs).chunk(2, dim=-1)
        dist = torch.distributions.Normal(mean, log_std.clamp(-5, 2).exp())
        action = dist.rsample()
        return AttrDict(action=action, log_prob=dist.log_prob(action).sum(-1), dist=dist)


class ReplayBuffer:
    def __init__(self, obs_dim, action_dim, size=64):
        self.data = AttrDict(observation=torch.randn(size, obs_dim), action=torch.randn(size, action_dim),
                             reward=torch.randn(size), done=torch.zeros(size),
                             observation_next=torch.randn(size, obs_dim))

    def sample(self, n_samples):
        idx = torch.randint(0, self.data.observation.shape[0], (n_samples,))
        return AttrDict({k: v[idx] for k, v in self.data.items()})


class SACAgent:
    def __init__(self, obs_dim=6, action_dim=2, batch_size=8, update_iterations=2):
        self.batch_size, self.update_iterations = batch_size, update_iterations
        self.discount_factor, self.tau = 0.99, 0.005
        self.policy = Policy(obs_dim, action_dim)
        self.policy_opt = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.critics = nn.ModuleList([Critic(obs_dim, action_dim) for _ in range(2)])
        self.critic_targets = nn.ModuleList([Critic(obs_dim, action_dim) for _ in range(2)])
        [target.load_state_dict(source.state_dict()) for target, source in zip(self.critic_targets, self.critics)]
        self.critic_opts = [torch.optim.Adam(critic.parameters(), lr=3e-4) for critic in self.critics]
        self._log_alpha = TensorModule(torch.zeros(1, requires_grad=True))
        self.alpha_opt = torch.optim.Adam(self._log_alpha.parameters(), lr=3e-4)
        self._target_entropy = -action_dim
        self.replay_buffer = ReplayBuffer(obs_dim, action_dim)

    @property
    def alpha(self):
        return self._log_alpha().exp()

    def update(self):
        for _ in range(self.update_iterations):
            experience_batch = self.replay_buffer.sample(n_samples=self.batch_size)
            policy_output = self.policy(experience_batch.observation)

            alpha_loss = self._compute_alpha_loss(policy_output)
            self._perform_update(alpha_loss, self.alpha_opt, self._log_alpha)

            policy_loss = self._compute_policy_loss(experience_batch, policy_output)

            with torch.no_grad():
                policy_output_next = self.policy(experience_batch.observation_next)
                value_next = self._compute_next_value(experience_batch, policy_output_next)
                q_target = experience_batch.reward + (1 - experience_batch.done) * self.discount_factor * value_next

            critic_losses, qs = self._compute_critic_loss(experience_batch, q_target)

            # update policy network on policy loss
            self._perform_update(policy_loss, self.policy_opt, self.policy)

            # update critic networks
            [self._perform_update(critic_loss, critic_opt, critic)
             for critic_loss, critic_opt, critic in zip(critic_losses, self.critic_opts, self.critics)]

            # update target networks
            [self._soft_update_target_network(critic_target, critic)
             for critic_target, critic in zip(self.critic_targets, self.critics)]
        return AttrDict(policy_loss=policy_loss.item(), alpha_loss=alpha_loss.item())

    def _perform_update(self, loss, opt, network):
        opt.zero_grad()
        loss.backward()
        opt.step()

    def _compute_alpha_loss(self, policy_output):
        return -1 * (self.alpha * (self._target_entropy + policy_output.log_prob).detach()).mean()

    def _compute_policy_loss(self, experience_batch, policy_output):
        q_est = torch.min(*[critic(experience_batch.observation, policy_output.action).q for critic in self.critics])
        policy_loss = -1 * q_est + self.alpha * policy_output.log_prob[:, None]
        return policy_loss.mean()

    def _compute_next_value(self, experience_batch, policy_output):
        q_next = torch.min(*[critic_target(experience_batch.observation_next, policy_output.action).q
                             for critic_target in self.critic_targets])
        return (q_next - self.alpha * policy_output.log_prob[:, None]).squeeze(-1)

    def _compute_critic_loss(self, experience_batch, q_target):
        qs = [critic(experience_batch.observation, experience_batch.action.detach()).q.squeeze(-1)
              for critic in self.critics]
        return [0.5 * (q - q_target).pow(2).mean() for q in qs], qs

    def _soft_update_target_network(self, target, source):
        for target_param, param in zip(target.parameters(), source.parameters()):
            target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)


agent = SACAgent()
for step in range(2):
    info = agent.update()
