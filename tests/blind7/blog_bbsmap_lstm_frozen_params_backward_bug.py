# Source: https://bbsmap.com/nlxrsizglvsxvno
"""The post "loss.backward() error when training an LSTM in PyTorch": an LSTMModel (nn.LSTM, then
nn.Linear on the last time step) trained with CrossEntropyLoss and SGD stops at loss.backward()
with "element 0 of tensors does not require grad and does not have a grad_fn". The post's cure is
to set requires_grad = True on every parameter again, so its model had them all switched off: here
the script freezes model.parameters() before the loop (the step the post's excerpt leaves out),
and no tensor in the loss has a graph. The post's model and training loop."""
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
    param.requires_grad = False
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(10):
    x = torch.randn(5, 3, 10)
    y = torch.LongTensor([0, 1, 0])
    y_pred = model(x)
    loss = loss_fn(y_pred, y)
    optimizer.zero_grad()
    loss.backward()  # expect: GG104
    optimizer.step()
    print(i, loss.item())
