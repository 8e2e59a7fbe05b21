"""A DQN-style target computed once from the target network before the update loop; the target
network is a plain module whose output keeps its graph."""
import torch
import torch.nn as nn
import torch.nn.functional as F

policy = nn.Linear(4, 2)
target = nn.Linear(4, 2)
target.load_state_dict(policy.state_dict())
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
obs = torch.randn(32, 4)
next_obs = torch.randn(32, 4)
next_q = target(next_obs).max(1)[0]
for it in range(3):
    q = policy(obs).gather(1, torch.zeros(32, 1, dtype=torch.long)).squeeze(1)
    loss = F.mse_loss(q, 0.99 * next_q)
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
