"""Policy-gradient epochs over a NumPy rollout converted with from_numpy, as_tensor and
FloatTensor."""
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(0)
observations = rng.normal(size=(10, 4)).astype(np.float32)
actions = rng.integers(0, 2, size=10)
returns = rng.normal(size=10)
policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)

obs_t = torch.from_numpy(observations)
act_t = torch.as_tensor(actions)
ret_t = torch.FloatTensor(returns)
ret_t = (ret_t - ret_t.mean()) / (ret_t.std() + 1e-8)
for epoch in range(3):
    logp = torch.log_softmax(policy(obs_t), dim=-1).gather(1, act_t.view(-1, 1)).squeeze(1)
    loss = -(logp * ret_t).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
