# Source: https://github.com/pytorch/tutorials/issues/3716
"""pytorch/tutorials#3716, on nn_tutorial's "Neural net from scratch (without torch.nn)": setting
`requires_grad=True` inside `torch.randn(...)` before the Xavier division makes `weights` a non-leaf whose `.grad`
stays None. Fixed as the tutorial does: `weights = torch.randn(784, 10) / math.sqrt(784)`, then
`weights.requires_grad_()`, so `weights` is a leaf that backward fills and the manual step can update.
Random tensors stand in for MNIST.
"""
import math

import torch

torch.manual_seed(0)
n, bs, lr, epochs = 256, 64, 0.5, 2
x_train = torch.randn(n, 784)
y_train = torch.randint(0, 10, (n,))

weights = torch.randn(784, 10) / math.sqrt(784)
weights.requires_grad_()
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
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()

print(loss_func(model(x_train[:bs]), y_train[:bs]))
