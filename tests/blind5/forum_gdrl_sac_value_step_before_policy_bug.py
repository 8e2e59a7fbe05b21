# Source: https://github.com/mimoralea/gdrl/issues/13
"""SAC from "Grokking Deep Reinforcement Learning" (chapter 12), as the issue reports it failing on
PyTorch >= 1.5: optimize_model builds the policy loss from the online twin Q-networks
(current_q_sa = min(Q_a(s, a_hat), Q_b(s, a_hat))), then computes and steps both Q losses, and only
then calls policy_loss.backward(). The value optimizers' steps have overwritten the Q weights the
policy loss's graph saved, so that backward raises "one of the variables needed for gradient
computation has been modified by an inplace operation". The book's FCGP policy (with its
learnable log-alpha and alpha optimizer) and FCQSA critics at small sizes; a replay of random
transitions stands in for the Bullet environment."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Normal


class FCQSA(nn.Module):
    def __init__(self, input_dim, output_dim, hidden_dims=(32, 32), activation_fc=F.relu):
        super(FCQSA, self).__init__()
        self.activation_fc = activation_fc
        self.input_layer = nn.Linear(input_dim + output_dim, hidden_dims[0])
        self.hidden_layers = nn.ModuleList()
        for i in range(len(hidden_dims) - 1):
            self.hidden_layers.append(nn.Linear(hidden_dims[i], hidden_dims[i + 1]))
        self.output_layer = nn.Linear(hidden_dims[-1], 1)

    def forward(self, state, action):
        x = self.activation_fc(self.input_layer(torch.cat((state, action), dim=1)))
        for hidden_layer in self.hidden_layers:
            x = self.activation_fc(hidden_layer(x))
        return self.output_layer(x)


class FCGP(nn.Module):
    def __init__(self, input_dim, action_bounds, log_std_min=-20, log_std_max=2,
                 hidden_dims=(32, 32), activation_fc=F.relu, entropy_lr=0.001):
        super(FCGP, self).__init__()
        self.activation_fc = activation_fc
        self.env_min, self.env_max = action_bounds
        self.log_std_min = log_std_min
        self.log_std_max = log_std_max
        self.input_layer = nn.Linear(input_dim, hidden_dims[0])
        self.hidden_layers = nn.ModuleList()
        for i in range(len(hidden_dims) - 1):
            self.hidden_layers.append(nn.Linear(hidden_dims[i], hidden_dims[i + 1]))
        self.output_layer_mean = nn.Linear(hidden_dims[-1], len(self.env_max))
        self.output_layer_log_std = nn.Linear(hidden_dims[-1], len(self.env_max))

        self.target_entropy = -np.prod(self.env_max.shape)
        self.logalpha = torch.zeros(1, requires_grad=True)
        self.alpha_optimizer = optim.Adam([self.logalpha], lr=entropy_lr)

    def rescale_fn(self, x):
        env_min = torch.tensor(self.env_min, dtype=torch.float32)
        env_max = torch.tensor(self.env_max, dtype=torch.float32)
        return (x + 1) / 2 * (env_max - env_min) + env_min

    def forward(self, state):
        x = self.activation_fc(self.input_layer(state))
        for hidden_layer in self.hidden_layers:
            x = self.activation_fc(hidden_layer(x))
        x_mean = self.output_layer_mean(x)
        x_log_std = self.output_layer_log_std(x)
        x_log_std = torch.clamp(x_log_std, self.log_std_min, self.log_std_max)
        return x_mean, x_log_std

    def full_pass(self, state, epsilon=1e-6):
        mean, log_std = self.forward(state)
        pi_s = Normal(mean, log_std.exp())
        pre_tanh_action = pi_s.rsample()
        tanh_action = torch.tanh(pre_tanh_action)
        action = self.rescale_fn(tanh_action)
        log_prob = pi_s.log_prob(pre_tanh_action) - torch.log((1 - tanh_action.pow(2)).clamp(0, 1) + epsilon)
        log_prob = log_prob.sum(dim=1, keepdim=True)
        return action, log_prob, self.rescale_fn(torch.tanh(mean))


class SAC():
    def __init__(self, nS, action_bounds, gamma=0.99, tau=0.005):
        nA = len(action_bounds[1])
        self.gamma = gamma
        self.tau = tau
        self.policy_model = FCGP(nS, action_bounds)
        self.policy_optimizer = optim.Adam(self.policy_model.parameters(), lr=0.0003)
        self.policy_max_grad_norm = float('inf')
        self.online_value_model_a = FCQSA(nS, nA)
        self.online_value_model_b = FCQSA(nS, nA)
        self.target_value_model_a = FCQSA(nS, nA)
        self.target_value_model_b = FCQSA(nS, nA)
        self.target_value_model_a.load_state_dict(self.online_value_model_a.state_dict())
        self.target_value_model_b.load_state_dict(self.online_value_model_b.state_dict())
        self.value_optimizer_a = optim.Adam(self.online_value_model_a.parameters(), lr=0.0005)
        self.value_optimizer_b = optim.Adam(self.online_value_model_b.parameters(), lr=0.0005)
        self.value_max_grad_norm = float('inf')

    def optimize_model(self, experiences):
        states, actions, rewards, next_states, is_terminals = experiences
        batch_size = len(is_terminals)

        # policy loss
        current_actions, logpi_s, _ = self.policy_model.full_pass(states)

        target_alpha = (logpi_s + self.policy_model.target_entropy).detach()
        alpha_loss = -(self.policy_model.logalpha * target_alpha).mean()

        self.policy_model.alpha_optimizer.zero_grad()
        alpha_loss.backward()
        self.policy_model.alpha_optimizer.step()
        alpha = self.policy_model.logalpha.exp()

        current_q_sa_a = self.online_value_model_a(states, current_actions)
        current_q_sa_b = self.online_value_model_b(states, current_actions)
        current_q_sa = torch.min(current_q_sa_a, current_q_sa_b)
        policy_loss = (alpha * logpi_s - current_q_sa).mean()

        # Q loss
        ap, logpi_sp, _ = self.policy_model.full_pass(next_states)
        q_spap_a = self.target_value_model_a(next_states, ap)
        q_spap_b = self.target_value_model_b(next_states, ap)
        q_spap = torch.min(q_spap_a, q_spap_b) - alpha * logpi_sp
        target_q_sa = (rewards + self.gamma * q_spap * (1 - is_terminals)).detach()

        q_sa_a = self.online_value_model_a(states, actions)
        q_sa_b = self.online_value_model_b(states, actions)
        qa_loss = (q_sa_a - target_q_sa).pow(2).mul(0.5).mean()
        qb_loss = (q_sa_b - target_q_sa).pow(2).mul(0.5).mean()

        self.value_optimizer_a.zero_grad()
        qa_loss.backward()
        torch.nn.utils.clip_grad_norm_(self.online_value_model_a.parameters(), self.value_max_grad_norm)
        self.value_optimizer_a.step()

        self.value_optimizer_b.zero_grad()
        qb_loss.backward()
        torch.nn.utils.clip_grad_norm_(self.online_value_model_b.parameters(), self.value_max_grad_norm)
        self.value_optimizer_b.step()

        self.policy_optimizer.zero_grad()
        policy_loss.backward()  # expect: GG103
        torch.nn.utils.clip_grad_norm_(self.policy_model.parameters(), self.policy_max_grad_norm)
        self.policy_optimizer.step()

    def update_value_networks(self):
        for target, online in [(self.target_value_model_a, self.online_value_model_a),
                               (self.target_value_model_b, self.online_value_model_b)]:
            for t, o in zip(target.parameters(), online.parameters()):
                t.data.copy_((1.0 - self.tau) * t.data + self.tau * o.data)


def sample_experiences(batch_size, nS, nA):
    states = torch.randn(batch_size, nS)
    actions = torch.rand(batch_size, nA) * 2 - 1
    rewards = torch.randn(batch_size, 1)
    next_states = torch.randn(batch_size, nS)
    is_terminals = (torch.rand(batch_size, 1) < 0.05).float()
    return states, actions, rewards, next_states, is_terminals


nS, nA = 8, 2
agent = SAC(nS, (np.array([-1.0, -1.0]), np.array([1.0, 1.0])))
for step in range(3):
    agent.optimize_model(sample_experiences(16, nS, nA))
    agent.update_value_networks()
