# Source: https://github.com/datawhalechina/d2l-ai-solutions-manual/issues/96
"""d2l (Dive into Deep Learning) section 6.2, exercise 2, as answered in the datawhale
solutions manual: "what error message do you get when auto-differentiating the Conv2D
we created?".

The chapter builds `corr2d` and a `Conv2D(nn.Module)` with a weight and a bias, then
learns a kernel by gradient descent on the squared error. The exercise calls
`output = conv2d_layer(X)` on an 8x8 input and `output.backward()` directly: the
output is a 7x7 matrix, not a scalar, so torch raises "grad can be implicitly created
only for scalar outputs".

This is the fixed twin, with the thread's fix: pass the upstream gradient explicitly,
`output.backward(torch.ones_like(output))` (the same as `output.sum().backward()`).
The chapter's kernel-learning loop runs first, as in the book.
"""
import torch
from torch import nn


def corr2d(X, K):
    """Compute 2D cross-correlation."""
    h, w = K.shape
    Y = torch.zeros((X.shape[0] - h + 1, X.shape[1] - w + 1))
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            Y[i, j] = (X[i:i + h, j:j + w] * K).sum()
    return Y


class Conv2D(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(kernel_size))
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return corr2d(x, self.weight) + self.bias


def learn_edge_kernel():
    # 6.2.4 learning a kernel (with nn.Conv2d, as in the book)
    X = torch.ones((6, 8))
    X[:, 2:6] = 0
    K = torch.tensor([[1.0, -1.0]])
    Y = corr2d(X, K)
    conv2d = nn.Conv2d(1, 1, kernel_size=(1, 2), bias=False)
    X = X.reshape((1, 1, 6, 8))
    Y = Y.reshape((1, 1, 6, 7))
    lr = 3e-2
    for i in range(10):
        Y_hat = conv2d(X)
        l = (Y_hat - Y) ** 2
        conv2d.zero_grad()
        l.sum().backward()
        conv2d.weight.data[:] -= lr * conv2d.weight.grad
        if (i + 1) % 2 == 0:
            print(f'epoch {i + 1}, loss {l.sum():.3f}')


def exercise_6_2_2():
    # torch.conv2d expects 4-D input; our Conv2D works on a matrix
    X = torch.randn(size=(8, 8))
    conv2d_layer = Conv2D(kernel_size=(2, 2))
    # set auto gradients for x
    X.requires_grad = True
    output = conv2d_layer(X)
    print(output.shape)
    grad_output = torch.ones_like(output)
    output.backward(grad_output)
    print("the gradients of weights :", conv2d_layer.weight.grad)
    print("the gradients of bias :", conv2d_layer.bias.grad)


if __name__ == '__main__':
    torch.manual_seed(0)
    learn_edge_kernel()
    exercise_6_2_2()
