# Source: https://github.com/yihaosun1124/OfflineRL-Kit/issues/15
"""OfflineRL-Kit, COMBO (offlinerlkit/policy/model_based/combo.py) with `with_lagrange=False`: the
reporter strips `retain_graph=True` from `critic1_loss.backward(...)`. Both conservative losses hold
`calc_pi_values` (inherited from CQLPolicy), where the actor's sampled actions `act` feed critic1 and
critic2, so critic1's backward frees the actor's graph and `critic2_loss.backward()` raises "Trying to
backward through the graph a second time". Fix: the critic update needs no gradient through the
policy's actions, so `calc_pi_values` detaches `act`. gym's Box, the dynamics model and the offline
buffers are stand-ins; random batches, 3 steps, CPU.
"""
import numpy as np
import torch
import torch.nn as nn
from typing import Dict, Tuple


class Box:
    """gym.spaces.Box stand-in."""
    def __init__(self, low, high, shape):
        self.low = np.full(shape, low, dtype=np.float32)
        self.high = np.full(shape, high, dtype=np.float32)
        self.shape = shape


class MLP(nn.Module):
    def __init__(self, in_dim, out_dim, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))

    def forward(self, x):
        return self.net(x)


class Critic(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.backbone = MLP(obs_dim + act_dim, 1)

    def forward(self, obs, actions):
        return self.backbone(torch.cat([obs, actions], dim=1))


class TanhDiagGaussianActor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.device = torch.device("cpu")
        self.backbone = MLP(obs_dim, 2 * act_dim)

    def forward(self, obs):
        mu, log_std = self.backbone(obs).chunk(2, dim=-1)
        return torch.distributions.Normal(mu, log_std.clamp(-5, 2).exp())


class SACPolicy(nn.Module):
    def __init__(self, actor, critic1, critic2, actor_optim, critic1_optim, critic2_optim,
                 tau=0.005, gamma=0.99, alpha=0.2):
        super().__init__()
        self.actor, self.critic1, self.critic2 = actor, critic1, critic2
        self.critic1_old = Critic(critic1.backbone.net[0].in_features - 2, 2)
        self.critic1_old.load_state_dict(critic1.state_dict())
        self.critic2_old = Critic(critic2.backbone.net[0].in_features - 2, 2)
        self.critic2_old.load_state_dict(critic2.state_dict())
        self.actor_optim, self.critic1_optim, self.critic2_optim = actor_optim, critic1_optim, critic2_optim
        self._tau, self._gamma, self._alpha = tau, gamma, alpha
        self._is_auto_alpha = False

    def _sync_weight(self):
        for o, n in zip(self.critic1_old.parameters(), self.critic1.parameters()):
            o.data.copy_(o.data * (1.0 - self._tau) + n.data * self._tau)
        for o, n in zip(self.critic2_old.parameters(), self.critic2.parameters()):
            o.data.copy_(o.data * (1.0 - self._tau) + n.data * self._tau)

    def actforward(self, obs: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        dist = self.actor(obs)
        raw = dist.rsample()
        squashed = torch.tanh(raw)
        log_prob = dist.log_prob(raw).sum(-1, keepdim=True) \
            - torch.log(1 - squashed.pow(2) + 1e-6).sum(-1, keepdim=True)
        return squashed, log_prob


class CQLPolicy(SACPolicy):
    """
    Conservative Q-Learning <Ref: https://arxiv.org/abs/2006.04779>
    """
    def __init__(self, actor, critic1, critic2, actor_optim, critic1_optim, critic2_optim,
                 action_space, cql_weight=1.0, temperature=1.0, with_lagrange=True,
                 lagrange_threshold=10.0, cql_alpha_lr=1e-4, num_repeart_actions=10, **kwargs):
        super().__init__(actor, critic1, critic2, actor_optim, critic1_optim, critic2_optim, **kwargs)
        self.action_space = action_space
        self._cql_weight = cql_weight
        self._temperature = temperature
        self._max_q_backup = False
        self._deterministic_backup = True
        self._with_lagrange = with_lagrange
        self._lagrange_threshold = lagrange_threshold
        self.cql_log_alpha = torch.zeros(1, requires_grad=True, device=self.actor.device)
        self.cql_alpha_optim = torch.optim.Adam([self.cql_log_alpha], lr=cql_alpha_lr)
        self._num_repeat_actions = num_repeart_actions

    def calc_pi_values(
        self,
        obs_pi: torch.Tensor,
        obs_to_pred: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        act, log_prob = self.actforward(obs_pi)
        q1 = self.critic1(obs_to_pred, act)
        q2 = self.critic2(obs_to_pred, act)

        return q1 - log_prob.detach(), q2 - log_prob.detach()

    def calc_random_values(self, obs, random_act):
        q1 = self.critic1(obs, random_act)
        q2 = self.critic2(obs, random_act)
        log_prob1 = np.log(0.5**random_act.shape[-1])
        log_prob2 = np.log(0.5**random_act.shape[-1])
        return q1 - log_prob1, q2 - log_prob2


class COMBOPolicy(CQLPolicy):
    """
    Conservative Offline Model-Based Policy Optimization <Ref: https://arxiv.org/abs/2102.08363>
    """
    def __init__(self, dynamics, *args, rho_s="mix", **kwargs):
        super().__init__(*args, **kwargs)
        self.dynamics = dynamics
        self._rho_s = rho_s

    def learn(self, batch: Dict) -> Dict[str, float]:
        real_batch, fake_batch = batch["real"], batch["fake"]
        mix_batch = {k: torch.cat([real_batch[k], fake_batch[k]], 0) for k in real_batch.keys()}

        obss, actions, next_obss, rewards, terminals = mix_batch["observations"], mix_batch["actions"], \
            mix_batch["next_observations"], mix_batch["rewards"], mix_batch["terminals"]
        batch_size = obss.shape[0]

        # update actor
        a, log_probs = self.actforward(obss)
        q1a, q2a = self.critic1(obss, a), self.critic2(obss, a)
        actor_loss = (self._alpha * log_probs - torch.min(q1a, q2a)).mean()
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()

        # compute td error
        with torch.no_grad():
            next_actions, next_log_probs = self.actforward(next_obss)
            next_q = torch.min(
                self.critic1_old(next_obss, next_actions),
                self.critic2_old(next_obss, next_actions)
            )

        target_q = rewards + self._gamma * (1 - terminals) * next_q
        q1, q2 = self.critic1(obss, actions), self.critic2(obss, actions)
        critic1_loss = ((q1 - target_q).pow(2)).mean()
        critic2_loss = ((q2 - target_q).pow(2)).mean()

        # compute conservative loss
        if self._rho_s == "model":
            obss, actions, next_obss = fake_batch["observations"], \
                fake_batch["actions"], fake_batch["next_observations"]

        batch_size = len(obss)
        random_actions = torch.FloatTensor(
            batch_size * self._num_repeat_actions, actions.shape[-1]
        ).uniform_(self.action_space.low[0], self.action_space.high[0]).to(self.actor.device)
        tmp_obss = obss.unsqueeze(1) \
            .repeat(1, self._num_repeat_actions, 1) \
            .view(batch_size * self._num_repeat_actions, obss.shape[-1])
        tmp_next_obss = next_obss.unsqueeze(1) \
            .repeat(1, self._num_repeat_actions, 1) \
            .view(batch_size * self._num_repeat_actions, obss.shape[-1])

        obs_pi_value1, obs_pi_value2 = self.calc_pi_values(tmp_obss, tmp_obss)
        next_obs_pi_value1, next_obs_pi_value2 = self.calc_pi_values(tmp_next_obss, tmp_obss)
        random_value1, random_value2 = self.calc_random_values(tmp_obss, random_actions)

        # cat_q shape: (batch_size, 3 * num_repeat, 1)
        cat_q1 = torch.cat([obs_pi_value1, next_obs_pi_value1, random_value1], 1)
        cat_q2 = torch.cat([obs_pi_value2, next_obs_pi_value2, random_value2], 1)
        # Samples from the original dataset
        real_obss, real_actions = real_batch['observations'], real_batch['actions']
        q1, q2 = self.critic1(real_obss, real_actions), self.critic2(real_obss, real_actions)

        conservative_loss1 = \
            torch.logsumexp(cat_q1 / self._temperature, dim=1).mean() * self._cql_weight * self._temperature - \
            q1.mean() * self._cql_weight
        conservative_loss2 = \
            torch.logsumexp(cat_q2 / self._temperature, dim=1).mean() * self._cql_weight * self._temperature - \
            q2.mean() * self._cql_weight

        if self._with_lagrange:
            cql_alpha = torch.clamp(self.cql_log_alpha.exp(), 0.0, 1e6)
            conservative_loss1 = cql_alpha * (conservative_loss1 - self._lagrange_threshold)
            conservative_loss2 = cql_alpha * (conservative_loss2 - self._lagrange_threshold)

            self.cql_alpha_optim.zero_grad()
            cql_alpha_loss = -(conservative_loss1 + conservative_loss2) * 0.5
            cql_alpha_loss.backward(retain_graph=True)
            self.cql_alpha_optim.step()

        critic1_loss = critic1_loss + conservative_loss1
        critic2_loss = critic2_loss + conservative_loss2

        # update critic
        self.critic1_optim.zero_grad()
        critic1_loss.backward()
        self.critic1_optim.step()

        self.critic2_optim.zero_grad()
        critic2_loss.backward()  # expect: GG101
        self.critic2_optim.step()

        self._sync_weight()

        return {
            "loss/actor": actor_loss.item(),
            "loss/critic1": critic1_loss.item(),
            "loss/critic2": critic2_loss.item()
        }


def make_batch(n, obs_dim, act_dim):
    return {
        "observations": torch.randn(n, obs_dim),
        "actions": torch.rand(n, act_dim) * 2 - 1,
        "next_observations": torch.randn(n, obs_dim),
        "rewards": torch.randn(n, 1),
        "terminals": torch.zeros(n, 1),
    }


def main():
    torch.manual_seed(0)
    obs_dim, act_dim = 5, 2
    actor = TanhDiagGaussianActor(obs_dim, act_dim)
    critic1, critic2 = Critic(obs_dim, act_dim), Critic(obs_dim, act_dim)
    actor_optim = torch.optim.Adam(actor.parameters(), lr=1e-4)
    critic1_optim = torch.optim.Adam(critic1.parameters(), lr=3e-4)
    critic2_optim = torch.optim.Adam(critic2.parameters(), lr=3e-4)
    policy = COMBOPolicy(
        None, actor, critic1, critic2, actor_optim, critic1_optim, critic2_optim,
        action_space=Box(-1.0, 1.0, (act_dim,)), cql_weight=5.0, with_lagrange=False,
        num_repeart_actions=4,
    )
    for step in range(3):
        batch = {"real": make_batch(8, obs_dim, act_dim), "fake": make_batch(8, obs_dim, act_dim)}
        loss = policy.learn(batch)
        print(step, {k: round(v, 4) for k, v in loss.items()})


if __name__ == "__main__":
    main()
