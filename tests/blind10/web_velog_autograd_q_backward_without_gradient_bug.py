# Source: https://velog.io/@jsyeon/Autograd자동미분
"""The velog note "Autograd(자동미분)": for Q = 3*a**3 - b**2 with two-element a and b, Q is a
vector, so Q.backward needs gradient=external_grad (torch.tensor([1, 1])) "because two derivative
values must come out"; called without it torch raises "grad can be implicitly created only for
scalar outputs". The note's Q, computed by a helper for a batch of parameter pairs and fitted by
gradient descent on a and b; the helper's result is backwarded without the gradient argument."""
import torch


def q_values(a, b):
    return 3 * a ** 3 - b ** 2


a = torch.tensor([2.0, 3.0], requires_grad=True)
b = torch.tensor([6.0, 4.0], requires_grad=True)
target = torch.tensor([-10.0, 60.0])
lr = 1e-3

for it in range(3):
    Q = q_values(a, b) - target
    Q.backward()  # expect: GG105
    with torch.no_grad():
        a -= lr * a.grad
        b -= lr * b.grad
    a.grad = None
    b.grad = None
    print(it, Q.tolist())
