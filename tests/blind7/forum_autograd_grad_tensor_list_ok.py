# Source: https://discuss.pytorch.org/t/pytorch-autograd-grad-only-one-element-tensors-can-be-converted-to-python-scalars/56681
"""The fix for the thread: non-scalar outputs need one grad_outputs tensor each, the vector of the
vector-Jacobian product; with ones, autograd.grad([c, d], [a, b]) returns d(sum c + sum d)/da and
/db (here 2 and 0 per element). Wrapping the lists in torch.tensor(...), the poster's second try,
only loses the graph."""
import torch

a = torch.rand(2, requires_grad=True)
b = torch.rand(2, requires_grad=True)
c = a+b
d = a-b
grads = torch.autograd.grad([c, d], [a, b], grad_outputs=[torch.ones_like(c), torch.ones_like(d)])
print(grads)
