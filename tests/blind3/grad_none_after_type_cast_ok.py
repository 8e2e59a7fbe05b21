# Source: https://github.com/pytorch/pytorch/issues/10065
"""The reporter's cast, fixed as the maintainer answered: create the tensor with the dtype it is used
in, `torch.tensor([1, 2, 3], requires_grad=True, dtype=torch.float)`, so that w1 is the leaf and
its .grad is populated."""
import torch

w1 = torch.tensor([1, 2, 3], requires_grad=True, dtype=torch.float)
print(w1, w1.type(), id(w1), w1.requires_grad)
o = torch.mean(w1)
o.backward()
print(w1.grad)
