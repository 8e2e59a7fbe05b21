# Source: https://blog.csdn.net/jacke121/article/details/82733197
"""The CSDN post "element 0 of tensors does not require grad and does not have a grad_fn": the
author's autograd exercise wraps x in `Variable(torch.ones(2, 2), requires_grad=False)`, builds
y = x + 2, z = y * y * 3, out = z.mean() and calls out.backward() to print x.grad; nothing in the
graph requires grad, so the backward raises. The post's cause: "requires_grad=False, should be
True". The author's script (the commented-out `.creator` prints are from pre-0.2 PyTorch)."""
import numpy as np
import torch
from torch.autograd import Variable

x = Variable(torch.ones(2, 2), requires_grad=False)
y = x + 2
# print(x.creator)  # None, a user-created Variable has no creator
# print(y.creator)
z = y * y * 3
out = z.mean()
out.backward()  # expect: GG104
print(x, y, z)
print(x.grad)  # d(out)/dx
# print(y.grad)  # y is not a leaf: its .grad is not kept
