"""Stateful LSTM: training windows start from a zero state; evaluation carries the state across
windows under torch.no_grad()."""
import torch
import torch.nn as nn

lstm, head = nn.LSTM(2, 6, batch_first=True), nn.Linear(6, 1)
opt = torch.optim.Adam([*lstm.parameters(), *head.parameters()], lr=1e-3)
series = torch.randn(1, 20, 2)
for epoch in range(2):
    for s in range(0, 16, 4):
        out, _ = lstm(series[:, s:s + 4])
        loss = (head(out) - series[:, s + 1:s + 5, :1]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    state = None
    with torch.no_grad():
        for s in range(0, 16, 4):
            out, state = lstm(series[:, s:s + 4], state)
