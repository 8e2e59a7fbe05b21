# Source: https://github.com/pytorch/pytorch/issues/91851
"""pytorch issue "None Gradient, when multiplying tensor by constant".

The reporter creates ``a = torch.tensor(5.0, requires_grad=True) * 0.1``: the leaf is the
temporary ``torch.tensor(5.0, requires_grad=True)``, and ``a`` is the result of the
multiplication, a non-leaf.  After ``c.backward()`` they print ``a.grad``: torch only fills
``.grad`` of leaves, so it warns "The .grad attribute of a Tensor that is not a leaf Tensor is
being accessed" and returns None (``b.grad`` is fine).

Fix (the reporter's own second snippet, which works as they expected): build
the value first and make *that* the leaf, ``a = torch.tensor(5.0) * 0.1; a.requires_grad = True``.
"""
import torch

a = torch.tensor(5.0, requires_grad=True) * 0.1
b = torch.tensor(2.0, requires_grad=True)
c = a + b
c.backward()

print(a.grad, b.grad)  # expect: GG106
