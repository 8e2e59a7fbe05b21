# Source: https://velog.io/@jsyeon/Autograd자동미분
"""The note's way: Q.backward(gradient=external_grad) with one weight per element of Q (made a
float tensor here: an integer tensor cannot be a gradient of float values)."""
import torch


def q_values(a, b):
    return 3 * a ** 3 - b ** 2


a = torch.tensor([2.0, 3.0], requires_grad=True)
b = torch.tensor([6.0, 4.0], requires_grad=True)
target = torch.tensor([-10.0, 60.0])
lr = 1e-3

for it in range(3):
    Q = q_values(a, b) - target
    external_grad = torch.tensor([1.0, 1.0])
    Q.backward(gradient=external_grad)
    with torch.no_grad():
        a -= lr * a.grad
        b -= lr * b.grad
    a.grad = None
    b.grad = None
    print(it, Q.tolist())
