# Source: https://hao-yiwen.github.io/yiwen-blog-website/en/docs/ai/frameworks/pytorch/common-errors
"""The page's recommended form: update in place under torch.no_grad() (w -= lr * w.grad), so w
and b stay the leaves that require grad, and clear their gradients after each step."""
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
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
    print(epoch, loss.item())
