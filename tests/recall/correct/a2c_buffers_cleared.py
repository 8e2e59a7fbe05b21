"""A2C with module-level rollout buffers read by index and cleared with list.clear()."""
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 3))
optimizer = torch.optim.Adam(net.parameters(), lr=7e-4)
values, log_probs, rewards = [], [], []


def collect(state, steps=3):
    for _ in range(steps):
        out = net(state)
        dist = torch.distributions.Categorical(logits=out[:2])
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        values.append(out[2])
        state = state + torch.tensor([0.1, -0.1]) * (action.item() * 2 - 1)
        rewards.append(-float(state.norm()))
    return state


def update(gamma=0.9):
    R, loss = 0.0, 0.0
    for i in reversed(range(len(rewards))):
        R = rewards[i] + gamma * R
        adv = R - values[i]
        loss = loss - log_probs[i] * adv.detach() + adv.pow(2)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    values.clear()
    log_probs.clear()
    rewards.clear()


state = torch.zeros(2)
for it in range(2):
    state = collect(state)
    update()
