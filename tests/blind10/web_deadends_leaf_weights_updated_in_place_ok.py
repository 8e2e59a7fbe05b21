# Source: https://deadends.dev/pytorch/runtime-error-inplace/pt2-linux
"""The entry's working fix, an out-of-place update: each parameter is replaced by a new leaf
computed from it (p - lr * grad, detached and made to require grad again), so no leaf is modified
in place."""
import torch

torch.manual_seed(0)


def init_params(n_features):
    w = torch.zeros(n_features, 1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    return [w, b]


def sgd_step(params, lr):
    return [(p - lr * p.grad).detach().requires_grad_() for p in params]


X = torch.randn(20, 3)
y = (X[:, :1] > 0).float()
params = init_params(3)
for epoch in range(3):
    w, b = params
    prob = torch.sigmoid(X @ w + b)
    loss = torch.nn.functional.binary_cross_entropy(prob, y)
    loss.backward()
    params = sgd_step(params, lr=0.5)
    print(epoch, loss.item())
