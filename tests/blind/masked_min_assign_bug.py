# Source: https://github.com/pytorch/pytorch/issues/24853
"""The reporter's code, which ran on PyTorch 1.1 and failed on 1.2 with the in-place error: the
masked entries of bb = b + 1 are replaced in place by their minimum with c. Re-labelled by running
torch 2.13, which runs it clean: bb[a != 0] is advanced indexing, a copy, so the min saves no view
of bb, and the add that made bb saves nothing (the maintainers fixed the 1.2 regression)."""
import torch

b0 = torch.tensor(5.0, requires_grad=True)
a = torch.Tensor([1, 0, 0])
b = torch.zeros(3, requires_grad=True)
c = torch.ones(3, requires_grad=True)

bb = b + 1

bb[a != 0] = torch.min(bb[a != 0], c[a != 0])

d = torch.sum(bb)
d.backward()
