"""An Elman RNN cell trained online from a generator that yields one observation at a time; the
update happens every few steps but the hidden state is never cut."""
import torch
import torch.nn as nn


def sensor_stream(n):
    for t in range(n):
        yield torch.tensor([[float(t % 5), float((t * 3) % 7)]]) / 5.0


cell = nn.RNNCell(2, 10)
readout = nn.Linear(10, 2)
opt = torch.optim.SGD([*cell.parameters(), *readout.parameters()], lr=0.01)
h = torch.zeros(1, 10)
prev = None
loss = 0.0
for t, obs in enumerate(sensor_stream(12)):
    if prev is not None:
        loss = loss + (readout(h) - obs).pow(2).sum()
    if t % 4 == 3:
        opt.zero_grad()
        loss.backward()  # expect: GG101
        opt.step()
        loss = 0.0
    h = cell(obs, h)
    prev = obs
