# Source: https://blog.csdn.net/cyj972628089/article/details/122732509
"""Softmax regression trained in the style of "Dive into Deep Learning" (train_epoch_ch3 with an
Accumulator): the loss is defined as nn.CrossEntropyLoss(reduction='none'), so l holds one loss
per example (a tensor of batch size), and the epoch calls l.backward() on it (the blog's error;
its fix: l.sum().backward(), or drop reduction='none'). Random images stand in for Fashion-MNIST."""
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
    net.train()
    metric = Accumulator(3)
    for X, y in train_iter:
        y_hat = net(X)
        l = loss(y_hat, y)
        updater.zero_grad()
        l.backward()  # expect: GG105
        updater.step()
        metric.add(float(l.sum()), accuracy(y_hat, y), y.numel())
    return metric[0] / metric[2], metric[1] / metric[2]


def init_weights(m):
    if type(m) == nn.Linear:
        nn.init.normal_(m.weight, std=0.01)


net = nn.Sequential(nn.Flatten(), nn.Linear(784, 10))
net.apply(init_weights)
loss = nn.CrossEntropyLoss(reduction='none')
trainer = torch.optim.SGD(net.parameters(), lr=0.1)
train_iter = [(torch.rand(16, 1, 28, 28), torch.randint(0, 10, (16,))) for _ in range(2)]
for epoch in range(2):
    train_metrics = train_epoch_ch3(net, train_iter, loss, trainer)
