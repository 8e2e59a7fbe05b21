# Source: https://github.com/pytorch/pytorch/issues/6991
"""The maintainer's answer in the thread: keep the leaf under its own name and give the clamped
value another, `b = torch.clamp(a, 0, 1)`; the gradient then lands in `a.grad` (2 inside the
clamp range)."""
import torch

for trial in range(3):
    a = torch.rand(1, requires_grad=True)
    b = torch.clamp(a, 0, 1)
    z = 2 * b
    z.backward()
    print(a.requires_grad)  # True
    print(a.grad)
