# Source: https://runebook.dev/en/docs/pytorch/generated/torch.autograd.function.inplacefunction/torch.autograd.function.InplaceFunction.backward
"""A runebook page, "PyTorch Autograd: In-Place vs. Out-of-Place Operations": its problem case shifted the leaf
`x = torch.tensor([1.0, 2.0], requires_grad=True)` in place with `x.add_(1)`, which autograd refuses on a leaf
that requires grad. Fixed as the page does: the out-of-place `y = x + 1`, then `z = torch.sum(y)` and
`z.backward()` (x.grad is ones, x itself unchanged).
"""
import torch

# This is a leaf variable
x = torch.tensor([1.0, 2.0], requires_grad=True)

# The Solution: Out-of-place operation
y = x + 1
print(y)
z = torch.sum(y)
z.backward()
print(f"Original leaf tensor 'x' is {x}")
print(f"Gradient of 'x' is {x.grad}")
