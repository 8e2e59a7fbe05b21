# Source: https://deadends.dev/pytorch/runtime-error-inplace/pt2-linux
"""The deadends.dev entry for "RuntimeError: a leaf Variable that requires grad is being used in
an in-place operation" (PyTorch >= 2.0, Linux): an in-place operation on a leaf tensor; it lists
detaching the tensor and turning off requires_grad as dead ends, and out-of-place updates as the
working fix. A logistic regression trained by hand on leaf weight tensors, whose update step
subtracts the gradient in place without disabling gradient tracking."""
import torch

torch.manual_seed(0)


def init_params(n_features):
    w = torch.zeros(n_features, 1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    return [w, b]


def sgd_step(params, lr):
    for p in params:
        p -= lr * p.grad  # expect: GG108
        p.grad.zero_()


X = torch.randn(20, 3)
y = (X[:, :1] > 0).float()
params = init_params(3)
for epoch in range(3):
    w, b = params
    prob = torch.sigmoid(X @ w + b)
    loss = torch.nn.functional.binary_cross_entropy(prob, y)
    loss.backward()
    sgd_step(params, lr=0.5)
    print(epoch, loss.item())
