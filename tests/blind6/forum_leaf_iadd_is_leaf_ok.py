# Source: https://discuss.pytorch.org/t/inplace-operation-changes-is-leaf-attribute/120297
"""The fix (the stored thread holds the question only): a leaf's values are changed in place
outside autograd, under `torch.no_grad()`, or through `c.detach()` as in the poster's working
operation 5. c stays a leaf that requires grad, and a later loss still reaches it."""
import torch

c = torch.randn(10, 3, 2, 32, requires_grad=True)
print(c.is_leaf)
with torch.no_grad():
    c += 1
    c.add_(1)
d = c.detach()
d += 1  # no error, and still leaf
print(c.is_leaf)
(c * 2).sum().backward()
print(c.grad.shape)
