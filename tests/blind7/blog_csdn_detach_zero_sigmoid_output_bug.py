# Source: https://blog.csdn.net/Arthur_Holmes/article/details/104212325
"""The CSDN post on detach(): c = out.detach() shares its data (and its version counter) with
out = a.sigmoid(). The post's first run backwards c, which has no graph ("element 0 of tensors does
not require grad"); its second run zeroes c in place and then calls out.sum().backward(): sigmoid
saved its output, the c.zero_() changed it, and torch raises "one of the variables needed for
gradient computation has been modified by an inplace operation". The post's second test.py."""
import torch

a = torch.tensor([1, 2, 3.], requires_grad=True)
print(a.grad)
out = a.sigmoid()
print(out)

# detach() shares storage with out: changing c changes out
c = out.detach()
print(c)
c.zero_()
print(c)
print(out)

out.sum().backward()  # expect: GG103
print(a.grad)
