# Source: https://bbsmap.com/nlxrsizglvsxvno
"""The post's fix: parameters that are to be trained keep requires_grad = True (the post sets it
on every parameter again, and switches off only the ones meant to stay fixed, e.g. the LSTM's
weight_ih_l0 and weight_hh_l0). Here the LSTM's input and recurrent weights stay frozen, the rest
trains, and loss.backward() has a graph through the biases and the linear head."""
import torch
import torch.nn as nn


class LSTMModel(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim):
        super(LSTMModel, self).__init__()
        self.hidden_dim = hidden_dim
        self.lstm = nn.LSTM(input_dim, hidden_dim)
        self.fc = nn.Linear(hidden_dim, output_dim)

    def forward(self, x):
        lstm_out, _ = self.lstm(x)
        output = self.fc(lstm_out[-1, :, :])
        return output


model = LSTMModel(10, 20, 2)
for param in model.parameters():
    param.requires_grad = True
model.lstm.weight_ih_l0.requires_grad = False
model.lstm.weight_hh_l0.requires_grad = False
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
for i in range(10):
    x = torch.randn(5, 3, 10)
    y = torch.LongTensor([0, 1, 0])
    y_pred = model(x)
    loss = loss_fn(y_pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(i, loss.item())
