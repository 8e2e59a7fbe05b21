# Source: https://taourl.com/read-2291003.html
"""The Q&A article "Error in Automatic Derivative Calculation with PyTorch": its first pitfall is
x = torch.tensor([2.0], requires_grad=False); y = x ** 2; y.backward(), which raises "element 0
of tensors does not require grad and does not have a grad_fn" because x was not set to track
operations; the fix is requires_grad=True. A Newton root finder whose derivative helper builds the
evaluation point the article's way before backwarding f(x)."""
import torch


def f(x):
    return x ** 2 - 2.0


def derivative(fn, x0):
    x = torch.tensor([x0], requires_grad=False)
    y = fn(x)
    y.backward()  # expect: GG104
    return x.grad.item()


def newton(fn, x0, steps=4):
    x = x0
    for _ in range(steps):
        x = x - fn(torch.tensor([x])).item() / derivative(fn, x)
    return x


print(newton(f, 2.0))
