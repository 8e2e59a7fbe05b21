"""An LSTM module that keeps its (h, c) state on self between forward calls for stateful batches,
without detaching it."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 6, batch_first=True)
        self.out = nn.Linear(6, 1)
        self.state = None

    def forward(self, x):
        y, self.state = self.lstm(x, self.state)
        return self.out(y[:, -1])


model = Model()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for batch in range(3):
    x, y = torch.randn(2, 5, 3), torch.randn(2, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
