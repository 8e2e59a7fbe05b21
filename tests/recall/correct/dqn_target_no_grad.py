"""Double DQN with a replay ratio of two and the TD target computed under torch.no_grad()."""
import copy

import torch
import torch.nn as nn

q_net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
target_net = copy.deepcopy(q_net)
optimizer = torch.optim.Adam(q_net.parameters(), lr=1e-3)
for update in range(2):
    s, a = torch.randn(8, 4), torch.randint(0, 2, (8, 1))
    r, s2 = torch.randn(8), torch.randn(8, 4)
    with torch.no_grad():
        next_a = q_net(s2).argmax(1, keepdim=True)
        target = r + 0.99 * target_net(s2).gather(1, next_a).squeeze(1)
    for _ in range(2):
        q = q_net(s).gather(1, a).squeeze(1)
        loss = nn.functional.smooth_l1_loss(q, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    target_net.load_state_dict(q_net.state_dict())
