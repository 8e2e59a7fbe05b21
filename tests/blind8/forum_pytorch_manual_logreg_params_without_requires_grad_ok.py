# Source: https://discuss.pytorch.org/t/runtimeerror-element-0-of-variables-does-not-require-grad-and-does-not-have-a-grad-fn/11074/26
"""The reply's fix: create the trainable tensors with `requires_grad=True`; the loss then has a
grad_fn, and the manual update under `torch.no_grad()` keeps W and b leaves."""
import torch


def predict(X, W, b):
    return torch.sigmoid(X @ W + b)


def bce(p, y):
    return -(y * torch.log(p + 1e-7) + (1 - y) * torch.log(1 - p + 1e-7)).mean()


X = torch.randn(100, 4)
y = (X[:, 0] + 0.5 * X[:, 1] > 0).float()

W = torch.zeros(4, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.5

for epoch in range(3):
    loss = bce(predict(X, W, b), y)
    loss.backward()
    with torch.no_grad():
        W -= lr * W.grad
        b -= lr * b.grad
        W.grad.zero_()
        b.grad.zero_()
    print(epoch, loss.item())
