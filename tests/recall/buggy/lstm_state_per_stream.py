"""Several sensor streams share one LSTM; each stream's (h, c) state is kept in a dict keyed by the
stream id between chunks, and put back without detaching."""
import torch
import torch.nn as nn

lstm = nn.LSTM(2, 6)
head = nn.Linear(6, 1)
opt = torch.optim.RMSprop([*lstm.parameters(), *head.parameters()], lr=1e-3)
streams = {name: torch.randn(12, 1, 2) for name in ("north", "south")}
states = {}

for chunk in range(3):
    for name, data in streams.items():
        x = data[chunk * 4:(chunk + 1) * 4]
        out, states[name] = lstm(x, states.get(name))
        loss = head(out).pow(2).mean()
        opt.zero_grad()
        loss.backward()  # expect: GG101
        opt.step()
