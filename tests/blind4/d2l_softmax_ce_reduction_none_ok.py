# Source: http://hbase.cn/archives/1390.html
"""d2l-style concise softmax regression with the post's fix: the per-example losses of
`nn.CrossEntropyLoss(reduction='none')` are summed before the backward, `l.sum().backward()`.
The net, the accumulator and the epoch/train functions follow d2l's train_epoch_ch3/train_ch3 with
the optimizer path; random 28x28 images and labels stand in for Fashion-MNIST."""
import torch
from torch import nn


class Accumulator:
    """For accumulating sums over `n` variables."""
    def __init__(self, n):
        self.data = [0.0] * n

    def add(self, *args):
        self.data = [a + float(b) for a, b in zip(self.data, args)]

    def __getitem__(self, idx):
        return self.data[idx]


def accuracy(y_hat, y):
    """Compute the number of correct predictions."""
    if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
        y_hat = y_hat.argmax(axis=1)
    cmp = y_hat.type(y.dtype) == y
    return float(cmp.type(y.dtype).sum())


def train_epoch_ch3(net, train_iter, loss, updater):
    """Train a model within one epoch."""
    net.train()
    metric = Accumulator(3)  # sum of training loss, sum of training accuracy, no. of examples
    for X, y in train_iter:
        y_hat = net(X)
        l = loss(y_hat, y)
        updater.zero_grad()
        l.sum().backward()
        updater.step()
        metric.add(float(l.sum()), accuracy(y_hat, y), y.numel())
    return metric[0] / metric[2], metric[1] / metric[2]


def train_ch3(net, train_iter, loss, num_epochs, updater):
    for epoch in range(num_epochs):
        train_loss, train_acc = train_epoch_ch3(net, train_iter, loss, updater)
        print(f'epoch {epoch + 1}, loss {train_loss:.3f}, train acc {train_acc:.3f}')


def init_weights(m):
    if type(m) == nn.Linear:
        nn.init.normal_(m.weight, std=0.01)


batch_size = 16
train_iter = [(torch.rand(batch_size, 1, 28, 28), torch.randint(0, 10, (batch_size,))) for _ in range(3)]
net = nn.Sequential(nn.Flatten(), nn.Linear(784, 10))
net.apply(init_weights)
loss = nn.CrossEntropyLoss(reduction='none')
trainer = torch.optim.SGD(net.parameters(), lr=0.1)
num_epochs = 2
train_ch3(net, train_iter, loss, num_epochs, trainer)
