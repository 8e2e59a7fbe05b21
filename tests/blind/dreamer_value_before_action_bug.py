# Source: https://github.com/cross32768/Dreamer_PyTorch/issues/2
"""Dreamer's behaviour learning (train.py): imagined trajectories from the action model are valued
by the value model, lambda returns are computed from them, the value model is updated first and
the action model second. action_loss backpropagates through lambda_target_values, i.e. through the
value model, whose weights value_optimizer.step() has just changed in place."""
import torch
import torch.nn as nn
from torch.nn.functional import mse_loss
from torch.nn.utils import clip_grad_norm_

STATE, ACT, HORIZON, GAMMA, LAMBDA_ = 6, 2, 4, 0.99, 0.95


class ValueModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(STATE, 16), nn.Linear(16, 1)

    def forward(self, state):
        return self.fc2(torch.relu(self.fc1(state)))


class ActionModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(STATE, 16), nn.Linear(16, ACT)

    def forward(self, state):
        return torch.tanh(self.fc2(torch.relu(self.fc1(state))))


def lambda_target(rewards, values, gamma, lambda_):
    V_lambda = torch.zeros_like(rewards)
    H = rewards.shape[0] - 1
    V_n = torch.zeros_like(rewards)
    V_n[H] = values[H]
    for n in range(1, H + 1):
        V_n[:-n] = (gamma ** n) * values[n:]
        for k in range(1, n + 1):
            if k == n:
                V_n[:-n] += (gamma ** (n - 1)) * rewards[k:]
            else:
                V_n[:-n] += (gamma ** (k - 1)) * rewards[k:-n + k]
        if n == H:
            V_lambda += (lambda_ ** (H - 1)) * V_n
        else:
            V_lambda += (1 - lambda_) * (lambda_ ** (n - 1)) * V_n
    return V_lambda


transition = nn.Linear(STATE + ACT, STATE)  # learned dynamics, trained elsewhere
reward_model = nn.Linear(STATE, 1)
value_model, action_model = ValueModel(), ActionModel()
value_optimizer = torch.optim.Adam(value_model.parameters(), lr=8e-5)
action_optimizer = torch.optim.Adam(action_model.parameters(), lr=8e-5)

for update_step in range(2):
    flatten_states = torch.randn(5, STATE)
    imaginated_states = []
    state = flatten_states
    for h in range(HORIZON):
        state = torch.tanh(transition(torch.cat([state, action_model(state)], dim=1)))
        imaginated_states.append(state)
    imaginated_states = torch.stack(imaginated_states)
    imaginated_rewards = reward_model(imaginated_states)
    imaginated_values = value_model(imaginated_states)
    lambda_target_values = lambda_target(imaginated_rewards, imaginated_values, GAMMA, LAMBDA_)

    # update value model
    value_loss = 0.5 * mse_loss(imaginated_values, lambda_target_values.detach())
    value_optimizer.zero_grad()
    value_loss.backward(retain_graph=True)
    clip_grad_norm_(value_model.parameters(), 100)
    value_optimizer.step()

    # update action model (multiply -1 for gradient ascent)
    action_loss = -1 * (lambda_target_values.mean())
    action_optimizer.zero_grad()
    action_loss.backward()  # expect: GG103
    clip_grad_norm_(action_model.parameters(), 100)
    action_optimizer.step()
