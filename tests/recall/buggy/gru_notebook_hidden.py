"""Top-level GRU forecaster over a long univariate series, fed in windows; the hidden state flows
from window to window with its whole history."""
import torch
import torch.nn as nn

series = torch.sin(torch.arange(0, 60, dtype=torch.float32) * 0.3).view(1, -1, 1)
gru = nn.GRU(1, 8, batch_first=True)
head = nn.Linear(8, 1)
optimizer = torch.optim.Adam(list(gru.parameters()) + list(head.parameters()), lr=0.01)
h = None
window = 10
for epoch in range(1):
    for t in range(0, 50, window):
        x = series[:, t:t + window]
        y = series[:, t + 1:t + window + 1]
        out, h = gru(x, h)
        loss = ((head(out) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()  # expect: GG101
        optimizer.step()
