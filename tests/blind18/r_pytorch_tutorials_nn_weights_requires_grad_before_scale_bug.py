# Source: https://github.com/pytorch/tutorials/issues/3716
"""pytorch/tutorials#3716, on nn_tutorial's "Neural net from scratch (without torch.nn)": the reporter asks why
`weights` gets `requires_grad_()` on a second line while `bias` gets `requires_grad=True` at creation, and
explains it: with `weights = torch.randn(784, 10, requires_grad=True) / math.sqrt(784)`, as written here, the
division is recorded and `weights` is no longer a leaf, so backward leaves its `.grad` None (torch warns that the
`.grad` of a non-leaf is read) and the tutorial's manual step `weights -= weights.grad * lr` raises a TypeError
on None. The fix is the tutorial's own code: scale first, then `weights.requires_grad_()`.
Random tensors stand in for MNIST.
"""
import math

import torch

torch.manual_seed(0)
n, bs, lr, epochs = 256, 64, 0.5, 2
x_train = torch.randn(n, 784)
y_train = torch.randint(0, 10, (n,))

weights = torch.randn(784, 10, requires_grad=True) / math.sqrt(784)
bias = torch.zeros(10, requires_grad=True)


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def model(xb):
    return log_softmax(xb @ weights + bias)


def nll(input, target):
    return -input[range(target.shape[0]), target].mean()


loss_func = nll

for epoch in range(epochs):
    for i in range((n - 1) // bs + 1):
        start_i = i * bs
        end_i = start_i + bs
        xb = x_train[start_i:end_i]
        yb = y_train[start_i:end_i]
        pred = model(xb)
        loss = loss_func(pred, yb)

        loss.backward()
        with torch.no_grad():
            weights -= weights.grad * lr  # expect: GG106
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()

print(loss_func(model(x_train[:bs]), y_train[:bs]))
