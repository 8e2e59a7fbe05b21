# Source: https://runebook.dev/en/docs/pytorch/generated/torch.autograd.function.inplacefunction/torch.autograd.function.InplaceFunction.backward
"""A runebook page, "PyTorch Autograd: In-Place vs. Out-of-Place Operations": its problem case shifts the leaf
`x = torch.tensor([1.0, 2.0], requires_grad=True)` in place with `x.add_(1)` before summing it and calling
backward; torch refuses the write at once: "a leaf Variable that requires grad is being used in an in-place
operation". The page's fix: the out-of-place `y = x + 1`, then `z = torch.sum(y)` and `z.backward()`
(x.grad is ones, x itself unchanged).
"""
import torch

# This is a leaf variable
x = torch.tensor([1.0, 2.0], requires_grad=True)

# The Problem: In-place operation
x.add_(1)  # expect: GG108
print(x)
y = x
z = torch.sum(y)
z.backward()
print(f"Original leaf tensor 'x' is {x}")
print(f"Gradient of 'x' is {x.grad}")
