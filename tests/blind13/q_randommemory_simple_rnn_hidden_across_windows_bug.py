# Source: https://randommemory.hatenablog.com/entry/2020/06/24/224322
"""A blogger ports DeZero's step59 (an RNN predicting a noisy sine wave, truncated BPTT every 30
steps) to PyTorch: `SimpleRNN.__call__` runs `h, self.hidden = self.rnn(x, self.hidden)` and keeps
the new hidden state on the module; `reset_state()` only runs at the start of each epoch. The second
`loss.backward()` (end of the second BPTT window) raises "Trying to backward through the graph a
second time": `self.hidden` still hangs on the first window's graph, already freed. The post's fix,
from the PyTorch forum thread it found, is to keep `hidden.detach()`; the `_ok` twin detaches it at
each window boundary, as DeZero's `loss.unchain_backward()` cuts the chain there. The training loop is
step59's (which the post imitates): `loss.unchain_backward()` is written `loss = loss.detach()`; the
SinCurve dataset is generated in the file, with fewer points and epochs.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SinCurve:
    """DeZero's SinCurve training set: (x_t, x_{t+1}) pairs of a noisy sine wave."""

    def __init__(self, train=True, num_data=100):
        x = np.linspace(0, 2 * np.pi, num_data)
        noise = np.random.uniform(-0.05, 0.05, size=x.shape) if train else 0
        y = np.sin(x) + noise
        self.data = y[:-1][:, np.newaxis]
        self.label = y[1:][:, np.newaxis]

    def __getitem__(self, i):
        return self.data[i], self.label[i]

    def __len__(self):
        return len(self.data)


class SimpleRNN(nn.Module):
    def __init__(self, hidden_size, out_size):
        super(SimpleRNN, self).__init__()
        self.rnn = nn.RNN(out_size, hidden_size, nonlinearity="tanh")
        self.fc = nn.Linear(hidden_size, out_size)
        self.reset_state()

    def reset_state(self):
        self.hidden = None

    def __call__(self, x):
        h, self.hidden = self.rnn(x, self.hidden)
        y = self.fc(h)
        return y


def to_torch(x):
    return torch.from_numpy(x.astype(np.float32)).clone()


np.random.seed(0)
torch.manual_seed(0)

max_epoch = 2
hidden_size = 16
bptt_length = 30

train_set = SinCurve(train=True)
seqlen = len(train_set)

model = SimpleRNN(hidden_size, 1)
optimizer = torch.optim.Adam(model.parameters())

for epoch in range(max_epoch):
    model.reset_state()
    loss, count = 0, 0

    for x, t in train_set:
        x, t = to_torch(x), to_torch(t)
        x.unsqueeze_(dim=0)
        y = model(x)
        loss += F.mse_loss(y.view(-1), t)
        count += 1

        if count % bptt_length == 0 or count == seqlen:
            optimizer.zero_grad()
            loss.backward()  # expect: GG101
            loss = loss.detach()  # DeZero: loss.unchain_backward()
            optimizer.step()

    avg_loss = float(loss) / count
    print('| epoch %d | loss %f' % (epoch + 1, avg_loss))
