# Source: https://python-jp.dev/articles/354576207
"""The article's fix (do the in-place step on a copy) would still raise under torch 2.13: the
copy of an integer tensor requires no grad either. The right fix, applied here: x is a floating
point leaf created with `requires_grad=True`, the increment is written out of place (an in-place
op on a leaf that requires grad is refused), and the three-element y is reduced to a scalar
before the backward."""
import torch

x = torch.tensor([1., 2., 3.], requires_grad=True)

# out-of-place operation
x1 = x + 1

y = x1 * 2

# gradient computation
y.sum().backward()
print(x.grad)
