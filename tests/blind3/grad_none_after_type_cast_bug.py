# Source: https://github.com/pytorch/pytorch/issues/10065
"""The reporter's "change of the tensor's type": w requires grad, w1 = w.type(torch.float) is the
result of a differentiable cast, a non-leaf, and after o = mean(w1); o.backward() the reporter
prints w1.grad and gets None. The report creates w from integers ([1, 2, 3]), which torch 2.13
refuses outright ("Only Tensors of floating point dtype can require gradients"), so w is a double
tensor here: the float cast is recorded the same way."""
import torch

w = torch.tensor([1, 2, 3], requires_grad=True, dtype=torch.double)
w1 = w.type(torch.float)
print(w1, w1.type(), id(w1), w1.requires_grad)
o = torch.mean(w1)
o.backward()
print(w1.grad)  # expect: GG106
