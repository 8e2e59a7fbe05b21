# Source: https://blog.gitcode.com/56c75ceeff41451911794d286df44372.html
"""The post's fix: the state is not modified in place; the layer stores new (detached) tensors
as its state instead of copying into the tensor the LSTM saved, so each batch's saved initial state
keeps its version and the state is still carried from batch to batch."""
import torch
import torch.nn as nn


class Variable:
    """Stand-in for keras.Variable; assign() stores a new tensor instead of copying in place."""

    def __init__(self, initializer):
        self.value = initializer

    def assign(self, value):
        self.value = value.detach().clone()


class StatefulLSTM(nn.Module):
    def __init__(self, batch_size, input_dim, units):
        super().__init__()
        self.cell = nn.LSTM(input_dim, units, batch_first=True)
        self.states = [Variable(torch.zeros(1, batch_size, units)), Variable(torch.zeros(1, batch_size, units))]

    def forward(self, inputs):
        h, c = self.states[0].value, self.states[1].value
        outputs, (h_n, c_n) = self.cell(inputs, (h, c))
        self.states[0].assign(h_n)
        self.states[1].assign(c_n)
        return outputs[:, -1]


class Model(nn.Module):
    def __init__(self, batch_size=4):
        super().__init__()
        self.lstm = StatefulLSTM(batch_size, input_dim=3, units=8)
        self.dense = nn.Linear(8, 1)

    def forward(self, x):
        return self.dense(self.lstm(x))


model = Model()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.MSELoss()
series = torch.randn(4, 30, 3)
targets = torch.randn(4, 3, 1)
for step in range(3):
    x = series[:, step * 10:(step + 1) * 10]
    optimizer.zero_grad()
    loss = loss_fn(model(x), targets[:, step])
    loss.backward()
    optimizer.step()
    print(step, loss.item())
