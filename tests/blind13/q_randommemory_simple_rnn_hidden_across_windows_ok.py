# Source: https://randommemory.hatenablog.com/entry/2020/06/24/224322
"""Fixed twin of q_randommemory_simple_rnn_hidden_across_windows_bug.py. A PyTorch port of DeZero's
step59 (RNN on a noisy sine wave, truncated BPTT every 30 steps) kept the RNN's hidden state on the
module across windows, so the second window's `loss.backward()` walked the first window's freed
graph (GG101). The post's fix keeps `hidden.detach()` (the forum's answer, which cuts the graph at
every step); the fix applied here detaches the hidden state at each window boundary, right after
the update, which is what DeZero's `loss.unchain_backward()` does, and keeps BPTT over the window.
The SinCurve dataset is generated in the file, with fewer points and epochs.
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

    def detach_state(self):
        if self.hidden is not None:
            self.hidden = self.hidden.detach()

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
            loss.backward()
            loss = loss.detach()  # DeZero: loss.unchain_backward()
            model.detach_state()  # cut the hidden state off the window just trained
            optimizer.step()


    avg_loss = float(loss) / count
    print('| epoch %d | loss %f' % (epoch + 1, avg_loss))
