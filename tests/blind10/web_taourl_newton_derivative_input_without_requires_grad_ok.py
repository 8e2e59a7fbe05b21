# Source: https://taourl.com/read-2291003.html
"""The article's fix: the evaluation point is created with requires_grad=True, so y = f(x) has a
graph and y.backward() fills x.grad."""
import torch


def f(x):
    return x ** 2 - 2.0


def derivative(fn, x0):
    x = torch.tensor([x0], requires_grad=True)
    y = fn(x)
    y.backward()
    return x.grad.item()


def newton(fn, x0, steps=4):
    x = x0
    for _ in range(steps):
        x = x - fn(torch.tensor([x])).item() / derivative(fn, x)
    return x


print(newton(f, 2.0))
