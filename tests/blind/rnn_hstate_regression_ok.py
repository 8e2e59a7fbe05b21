# Source: https://github.com/MorvanZhou/PyTorch-Tutorial/issues/57
"""MorvanZhou's tutorial 403 (RNN regression, sin -> cos) as published: `h_state = h_state.data`
cuts the hidden state off the previous step's graph (the answer: keep that line, or detach())."""
import numpy as np
import torch
from torch import nn

TIME_STEP = 10
INPUT_SIZE = 1
LR = 0.02


class RNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(input_size=INPUT_SIZE, hidden_size=8, num_layers=1, batch_first=True)
        self.out = nn.Linear(8, 1)

    def forward(self, x, h_state):
        r_out, h_state = self.rnn(x, h_state)
        outs = [self.out(r_out[:, t, :]) for t in range(r_out.size(1))]
        return torch.stack(outs, dim=1), h_state


rnn = RNN()
optimizer = torch.optim.Adam(rnn.parameters(), lr=LR)
loss_func = nn.MSELoss()
h_state = None

for step in range(4):
    start, end = step * np.pi, (step + 1) * np.pi
    steps = np.linspace(start, end, TIME_STEP, dtype=np.float32)
    x = torch.from_numpy(np.sin(steps)[np.newaxis, :, np.newaxis])
    y = torch.from_numpy(np.cos(steps)[np.newaxis, :, np.newaxis])

    prediction, h_state = rnn(x, h_state)
    h_state = h_state.data  # repack the hidden state, break the connection from last iteration

    loss = loss_func(prediction, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
