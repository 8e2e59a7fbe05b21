"""Like a rollout memory of typing.NamedTuple steps with a default field, never cleared between
episodes."""
from typing import NamedTuple

import torch
import torch.nn as nn


class Step(NamedTuple):
    logp: torch.Tensor
    value: torch.Tensor
    done: bool = False


net = nn.Linear(4, 3)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
memory = []
for episode in range(2):
    for t in range(3):
        out = net(torch.randn(1, 4))
        memory.append(Step(torch.log_softmax(out[:, :2], 1)[0, 0], value=out[0, 2]))
    loss = sum(-s.logp + s.value ** 2 for s in memory if not s.done)
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
