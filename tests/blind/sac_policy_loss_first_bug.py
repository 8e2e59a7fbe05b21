# Source: https://github.com/toshikwa/soft-actor-critic.pytorch/issues/1
"""Soft actor-critic learn() of toshikwa/soft-actor-critic.pytorch: the critic losses and the
policy loss are computed first, then Q1, Q2 and the policy are updated one after the other. The
policy loss goes through Q1 and Q2, whose weights the critic optimizers' steps have just changed
in place, so the policy's backward fails (pytorch >= 1.5; the fix in the thread: compute the
policy loss after updating Q1 and Q2)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

S, A, GAMMA = 4, 2, 0.99


def update_params(optim, network, loss, grad_clip=None, retain_graph=False):
    optim.zero_grad()
    loss.backward(retain_graph=retain_graph)  # expect: GG103
    if grad_clip is not None:
        for p in network.modules():
            torch.nn.utils.clip_grad_norm_(p.parameters(), grad_clip)
    optim.step()


class QNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.Q = nn.Sequential(nn.Linear(S + A, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, states, actions):
        return self.Q(torch.cat([states, actions], dim=1))


class TwinnedQNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.Q1, self.Q2 = QNetwork(), QNetwork()

    def forward(self, states, actions):
        return self.Q1(states, actions), self.Q2(states, actions)


class GaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.policy = nn.Sequential(nn.Linear(S, 16), nn.ReLU(), nn.Linear(16, 2 * A))

    def sample(self, states):
        mean, log_std = self.policy(states).chunk(2, dim=-1)
        normal = torch.distributions.Normal(mean, log_std.clamp(-20, 2).exp())
        xs = normal.rsample()
        actions = torch.tanh(xs)
        log_probs = (normal.log_prob(xs) - torch.log(1 - actions.pow(2) + 1e-6)).sum(1, keepdim=True)
        return actions, -log_probs


class SacAgent:
    def __init__(self):
        self.policy, self.critic, self.critic_target = GaussianPolicy(), TwinnedQNetwork(), TwinnedQNetwork()
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.policy_optim = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.q1_optim = torch.optim.Adam(self.critic.Q1.parameters(), lr=3e-4)
        self.q2_optim = torch.optim.Adam(self.critic.Q2.parameters(), lr=3e-4)
        self.alpha, self.grad_clip = 0.2, None

    def calc_critic_loss(self, batch, weights):
        states, actions, rewards, next_states, dones = batch
        curr_q1, curr_q2 = self.critic(states, actions)
        with torch.no_grad():
            next_actions, next_entropies = self.policy.sample(next_states)
            next_q1, next_q2 = self.critic_target(next_states, next_actions)
            next_q = torch.min(next_q1, next_q2) + self.alpha * next_entropies
            target_q = rewards + (1.0 - dones) * GAMMA * next_q
        q1_loss = torch.mean((curr_q1 - target_q).pow(2) * weights)
        q2_loss = torch.mean((curr_q2 - target_q).pow(2) * weights)
        return q1_loss, q2_loss

    def calc_policy_loss(self, batch, weights):
        states = batch[0]
        sampled_action, entropy = self.policy.sample(states)
        q1, q2 = self.critic(states, sampled_action)
        q = torch.min(q1, q2)
        policy_loss = torch.mean((-q - self.alpha * entropy) * weights)
        return policy_loss, entropy

    def learn(self, batch, weights):
        q1_loss, q2_loss = self.calc_critic_loss(batch, weights)
        policy_loss, entropies = self.calc_policy_loss(batch, weights)

        update_params(self.q1_optim, self.critic.Q1, q1_loss, self.grad_clip)
        update_params(self.q2_optim, self.critic.Q2, q2_loss, self.grad_clip)
        update_params(self.policy_optim, self.policy, policy_loss, self.grad_clip)


agent = SacAgent()
B = 8
batch = (torch.randn(B, S), torch.rand(B, A) * 2 - 1, torch.randn(B, 1), torch.randn(B, S), torch.zeros(B, 1))
agent.learn(batch, torch.ones(B, 1))
