"""Per-stream LSTM states kept in a dict and detached element-wise with a generator expression."""
import torch
import torch.nn as nn

lstm = nn.LSTM(2, 6)
head = nn.Linear(6, 1)
opt = torch.optim.RMSprop([*lstm.parameters(), *head.parameters()], lr=1e-3)
streams = {name: torch.randn(12, 1, 2) for name in ("north", "south")}
states = {}
for chunk in range(3):
    for name, data in streams.items():
        state = states.get(name)
        if state is not None:
            state = tuple(s.detach() for s in state)
        out, states[name] = lstm(data[chunk * 4:(chunk + 1) * 4], state)
        loss = head(out).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
