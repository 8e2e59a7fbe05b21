# Source: https://blog.gitcode.com/56c75ceeff41451911794d286df44372.html
"""The post on training a stateful LSTM with Keras 3 on the PyTorch backend: the layer keeps its
hidden and cell states in variables between batches and, after each call, assigns the final
states back into them. The torch backend's Variable.assign copies into the variable's tensor in
place, but this batch's LSTM took that tensor as its initial state and saved it, so the training
step's backward raises "one of the variables needed for gradient computation has been modified by
an inplace operation" ("is at version 1; expected version 0"). Keras is replaced by a small Variable
with the backend's in-place assign and a stateful LSTM layer; random sequences, CPU."""
import torch
import torch.nn as nn


class Variable:
    """Stand-in for keras.Variable on the torch backend: assign() copies into the tensor in place."""

    def __init__(self, initializer):
        self.value = initializer

    def assign(self, value):
        with torch.no_grad():
            self.value.copy_(value)


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
    loss.backward()  # expect: GG103
    optimizer.step()
    print(step, loss.item())
