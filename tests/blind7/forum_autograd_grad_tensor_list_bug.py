# Source: https://discuss.pytorch.org/t/pytorch-autograd-grad-only-one-element-tensors-can-be-converted-to-python-scalars/56681
"""The forum thread "Pytorch autograd.grad: only one element tensors can be converted to Python
scalars": the poster wants the gradients of a list of tensors (c = a + b, d = a - b, two elements
each) with respect to another list (a, b) and calls torch.autograd.grad([c, d], [a, b]) without
grad_outputs. On the poster's version the call failed with a ValueError; torch 2.13 checks the
outputs first and raises "grad can be implicitly created only for scalar outputs" on that line.
The poster's session, as a script."""
import torch

a = torch.rand(2, requires_grad=True)
b = torch.rand(2, requires_grad=True)
c = a+b
d = a-b
grads = torch.autograd.grad([c, d], [a, b])  # expect: GG105
print(grads)
