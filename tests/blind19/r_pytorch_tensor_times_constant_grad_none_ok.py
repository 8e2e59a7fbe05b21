# Source: https://github.com/pytorch/pytorch/issues/91851
"""pytorch issue "None Gradient, when multiplying tensor by constant" -- fixed.

The reporter created ``a = torch.tensor(5.0, requires_grad=True) * 0.1`` and printed ``a.grad``
after ``c.backward()``; ``a`` is the non-leaf product, so torch warned and returned None.

Fix (the reporter's own second snippet, applied here): compute the value first
and make it the leaf with ``a.requires_grad = True``; ``a.grad`` is then ``tensor(1.)``.
"""
import torch

a = torch.tensor(5.0) * 0.1
a.requires_grad = True
b = torch.tensor(2.0, requires_grad=True)
c = a + b
c.backward()

print(a.grad, b.grad)
