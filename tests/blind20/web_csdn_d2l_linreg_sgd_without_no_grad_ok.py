# Source: https://blog.csdn.net/Tracy_yi/article/details/131764705
"""d2l "linear regression from scratch" with the minibatch ``sgd`` under ``torch.no_grad()`` (fixed).

The post walks through the d2l.ai linear-regression-from-scratch program: a
synthetic data set ``y = Xw + b + noise``, a shuffling ``data_iter``
generator, hand-made parameters ``w`` and ``b`` (leaf tensors with
``requires_grad=True``), ``linreg`` / ``squared_loss`` and a hand-written
``sgd`` step.  The author then removes the ``with torch.no_grad():`` from
``sgd`` to see why it is there: ``param -= lr * param.grad / batch_size`` is
then an in-place update of a leaf that requires grad while autograd is
recording, so the very first step raises "a leaf Variable that requires grad
is being used in an in-place operation".

Fixed here as in the post and the d2l original: the update runs inside
``with torch.no_grad():``, so the in-place step is not recorded (the
per-parameter debug print is dropped).
"""
import random

import torch

random.seed(0)
torch.manual_seed(0)


def synthetic_data(w, b, num_examples):  #@save
    """生成y=Xw+b+噪声"""
    X = torch.normal(0, 1, (num_examples, len(w)))
    y = torch.matmul(X, w) + b
    y += torch.normal(0, 0.01, y.shape)
    return X, y.reshape((-1, 1))


true_w = torch.tensor([2, -3.4])
true_b = 4.2
features, labels = synthetic_data(true_w, true_b, 100)


def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = list(range(num_examples))
    # 这些样本是随机读取的,没有特定的顺序
    random.shuffle(indices)
    for i in range(0, num_examples, batch_size):
        batch_indices = torch.tensor(
            indices[i: min(i + batch_size, num_examples)])
        yield features[batch_indices], labels[batch_indices]


w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)


def linreg(X, w, b):  #@save
    """线性回归模型"""
    return torch.matmul(X, w) + b


def squared_loss(y_hat, y):  #@save
    """均方损失"""
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):  #@save
    """小批量随机梯度下降"""
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


lr = 0.03
num_epochs = 3
batch_size = 10
net = linreg
loss = squared_loss

for epoch in range(num_epochs):
    for X, y in data_iter(batch_size, features, labels):
        l = loss(net(X, w, b), y)  # X和y的小批量损失
        # 因为l形状是(batch_size,1),而不是一个标量。l中的所有元素被加到一起,
        # 并以此计算关于[w,b]的梯度
        l.sum().backward()
        sgd([w, b], lr, batch_size)  # 使用参数的梯度更新参数
    with torch.no_grad():
        train_l = loss(net(features, w, b), labels)
        print(f'epoch {epoch + 1}, loss {float(train_l.mean()):f}')
