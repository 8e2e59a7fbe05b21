# Source: https://discuss.pytorch.org/t/runtimeerror-element-0-of-variables-does-not-require-grad-and-does-not-have-a-grad-fn/11074/26
"""The forum thread "RuntimeError: element 0 of variables does not require grad and does not have a
grad_fn". The reply stored at post 26 reads the poster's tensors: "None of them seem to have a
grad_fn. Did you create these tensors with requires_grad=True?" Reconstructed as the case that
reply describes: a hand-written logistic regression whose weight and bias are created as plain
tensors (no `requires_grad=True`) and updated by a manual gradient step, so the loss built from
them has no grad_fn and its backward raises."""
import torch


def predict(X, W, b):
    return torch.sigmoid(X @ W + b)


def bce(p, y):
    return -(y * torch.log(p + 1e-7) + (1 - y) * torch.log(1 - p + 1e-7)).mean()


X = torch.randn(100, 4)
y = (X[:, 0] + 0.5 * X[:, 1] > 0).float()

W = torch.zeros(4)
b = torch.zeros(1)
lr = 0.5

for epoch in range(3):
    loss = bce(predict(X, W, b), y)
    loss.backward()  # expect: GG104
    with torch.no_grad():
        W -= lr * W.grad
        b -= lr * b.grad
        W.grad.zero_()
        b.grad.zero_()
    print(epoch, loss.item())
