"""Double DQN with a replay ratio of two: each sampled batch is used for two gradient steps, but
its TD target (from the target network, which still requires grad) is computed once per batch."""
import copy

import torch
import torch.nn as nn

q_net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
target_net = copy.deepcopy(q_net)
optimizer = torch.optim.Adam(q_net.parameters(), lr=1e-3)
gamma = 0.99

for update in range(2):
    s, a = torch.randn(8, 4), torch.randint(0, 2, (8, 1))
    r, s2, done = torch.randn(8), torch.randn(8, 4), torch.zeros(8)
    next_a = q_net(s2).argmax(1, keepdim=True)
    next_q = target_net(s2).gather(1, next_a).squeeze(1)
    target = r + gamma * (1 - done) * next_q
    for _ in range(2):
        q = q_net(s).gather(1, a).squeeze(1)
        loss = nn.functional.smooth_l1_loss(q, target)
        optimizer.zero_grad()
        loss.backward()  # expect: GG101
        optimizer.step()
    target_net.load_state_dict(q_net.state_dict())
