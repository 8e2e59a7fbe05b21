# Source: https://blog.youkuaiyun.com/walkertc/article/details/131945481
"""A CSDN note, "CrossEntropyLoss reduction='none' makes the program fail": the concise softmax regression
of Dive into Deep Learning with `loss = nn.CrossEntropyLoss(reduction='none')` (the new book's line), trained
by the d2l package's `train_ch3`, whose `train_epoch_ch3` in that release calls `l.backward()` on the loss
when the updater is a torch optimizer. The per-example loss vector raises "grad can be implicitly created
only for scalar outputs". The post's fix: `nn.CrossEntropyLoss(reduction='mean')`.
The d2l helpers (Accumulator, accuracy, train_ch3, a printing Animator) are written here; random 8x8
"Fashion-MNIST" batches, CPU.
"""
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


class Animator:
    """Stand-in for d2l.Animator: prints the points instead of drawing them."""

    def __init__(self, xlabel=None, xlim=None, ylim=None, legend=None):
        self.legend = legend

    def add(self, x, y):
        print(x, dict(zip(self.legend, [round(v, 4) if v is not None else v for v in y])))


def accuracy(y_hat, y):
    if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
        y_hat = y_hat.argmax(axis=1)
    cmp = y_hat.type(y.dtype) == y
    return float(cmp.type(y.dtype).sum())


def evaluate_accuracy(net, data_iter):
    if isinstance(net, torch.nn.Module):
        net.eval()
    metric = Accumulator(2)
    with torch.no_grad():
        for X, y in data_iter:
            metric.add(accuracy(net(X), y), y.numel())
    return metric[0] / metric[1]


def train_epoch_ch3(net, train_iter, loss, updater):
    if isinstance(net, torch.nn.Module):
        net.train()
    metric = Accumulator(3)
    for X, y in train_iter:
        y_hat = net(X)
        l = loss(y_hat, y)
        if isinstance(updater, torch.optim.Optimizer):
            updater.zero_grad()
            l.backward()  # expect: GG105
            updater.step()
            metric.add(float(l) * len(y), accuracy(y_hat, y), y.size().numel())
        else:
            l.sum().backward()
            updater(X.shape[0])
            metric.add(float(l.sum()), accuracy(y_hat, y), y.numel())
    return metric[0] / metric[2], metric[1] / metric[2]


def train_ch3(net, train_iter, test_iter, loss, num_epochs, updater):
    animator = Animator(xlabel='epoch', xlim=[1, num_epochs], ylim=[0.3, 0.9],
                        legend=['train loss', 'train acc', 'test acc'])
    for epoch in range(num_epochs):
        train_metrics = train_epoch_ch3(net, train_iter, loss, updater)
        test_acc = evaluate_accuracy(net, test_iter)
        animator.add(epoch + 1, train_metrics + (test_acc,))


def load_data_fashion_mnist(batch_size, n_batches=3):
    """Stand-in for d2l.load_data_fashion_mnist: random 1x8x8 images, 10 classes."""
    make = lambda: [(torch.rand(batch_size, 1, 8, 8), torch.randint(0, 10, (batch_size,))) for _ in range(n_batches)]
    return make(), make()


batch_size = 16
train_iter, test_iter = load_data_fashion_mnist(batch_size)

net = nn.Sequential(nn.Flatten(), nn.Linear(64, 10))


def init_weights(m):
    if type(m) == nn.Linear:
        nn.init.normal_(m.weight, std=0.01)


net.apply(init_weights)

# 损失函数 交叉熵
loss = nn.CrossEntropyLoss(reduction='none')
trainer = torch.optim.SGD(net.parameters(), lr=0.1)
num_epochs = 3
train_ch3(net, train_iter, test_iter, loss, num_epochs, trainer)
