# Source: https://hao-yiwen.github.io/yiwen-blog-website/en/docs/ai/frameworks/pytorch/common-errors
"""The blog page "PyTorch common errors and pitfalls" (in Chinese): inside torch.no_grad(),
`w -= lr * w.grad` updates the parameter in place, but `w = w - lr * w.grad` builds a new tensor
under no_grad whose requires_grad is False - "the next round will not compute gradients any
more". A from-scratch linear regression whose hand-written SGD step rebinds both weight and
bias that way: the second epoch's loss has no grad_fn and its backward raises."""
import torch


def linreg(X, w, b):
    return X @ w + b


def squared_loss(y_hat, y):
    return ((y_hat - y) ** 2 / 2).mean()


true_w, true_b = torch.tensor([[2.0], [-3.4]]), 4.2
X = torch.randn(64, 2)
y = X @ true_w + true_b + 0.01 * torch.randn(64, 1)

w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.1

for epoch in range(3):
    loss = squared_loss(linreg(X, w, b), y)
    loss.backward()  # expect: GG104
    with torch.no_grad():
        w = w - lr * w.grad
        b = b - lr * b.grad
    print(epoch, loss.item())
