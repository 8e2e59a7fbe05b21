# Source: https://github.com/pytorch/pytorch/issues/13113
"""The reporter's working variant: the tensor is created, moved (here the float64 cast that
stands in for .cuda()), and only then made to require grad, so a is a leaf and a.grad holds
d(mean(a**2))/da = 2a/3."""
import torch

a = torch.tensor([1., 2., 3.])
a = a.to(torch.float64)  # a.cuda() in the report
a.requires_grad = True
b = a ** 2
c = b.mean(0)
c.backward()
print(a.grad)
