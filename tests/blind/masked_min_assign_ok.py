# Source: https://github.com/pytorch/pytorch/issues/24853
"""The reporter's computation written out of place (the maintainers: the error is legitimate;
do not write into a tensor whose values the backward needs): torch.where picks the clamped value
on the masked entries."""
import torch

b0 = torch.tensor(5.0, requires_grad=True)
a = torch.Tensor([1, 0, 0])
b = torch.zeros(3, requires_grad=True)
c = torch.ones(3, requires_grad=True)

bb = b + 1

bb = torch.where(a != 0, torch.min(bb, c), bb)

d = torch.sum(bb)
d.backward()
