# Source: https://discuss.pytorch.org/t/pytorch-runtimeerror-trying-to-backward-through-the-graph-a-second-time/191396
"""PPO as the poster describes it: value functions V(s) and Q(s, a) are classes with their own MSE
loss and SGD step, fitted at every time step; the clipped surrogate of each step is computed from
the advantage A = V(s) - Q(s, a) and kept; at the end of the episode the policy's SGA backwards
their mean. The advantage is not detached, so that backward reaches the value networks' graphs,
which their per-step SGD already freed."""
import torch
import torch.nn as nn


class ValueFunction(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, 16), nn.Tanh(), nn.Linear(16, 1))
        self.optimizer = torch.optim.SGD(self.parameters(), lr=1e-2)

    def forward(self, x):
        return self.net(x)

    def mse_loss(self, prediction, target):
        return ((prediction - target) ** 2).mean()

    def sgd(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


class PolicyNetwork(nn.Module):
    def __init__(self, n_obs, n_act, clip=0.2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_obs, 16), nn.Tanh(), nn.Linear(16, n_act), nn.Softmax(dim=-1))
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        self.clip = clip

    def forward(self, s):
        return self.net(s)

    def clipped_surrogate(self, prob, old_prob, advantage):
        ratio = prob / old_prob
        return torch.min(ratio * advantage, torch.clamp(ratio, 1 - self.clip, 1 + self.clip) * advantage)

    def sga(self, surrogates):
        objective = torch.stack(surrogates).mean()
        self.optimizer.zero_grad()
        (-objective).backward()  # expect: GG101
        self.optimizer.step()


N_OBS, N_ACT, GAMMA = 4, 2, 0.99
policy = PolicyNetwork(N_OBS, N_ACT)
V, Q = ValueFunction(N_OBS), ValueFunction(N_OBS + 1)

for episode in range(2):
    state, surrogates = torch.randn(N_OBS), []
    for t in range(5):
        probs = policy(state)
        action = torch.multinomial(probs.detach(), 1)
        old_prob = probs[action].detach()
        next_state, reward = torch.randn(N_OBS), torch.randn(1)
        sa = torch.cat([state, action.float()])
        v, q = V(state), Q(sa)
        V.sgd(V.mse_loss(v, reward + GAMMA * V(next_state).detach()))
        Q.sgd(Q.mse_loss(q, reward + GAMMA * V(next_state).detach()))
        advantage = q - v
        surrogates.append(policy.clipped_surrogate(policy(state)[action], old_prob, advantage))
        state = next_state
    policy.sga(surrogates)
