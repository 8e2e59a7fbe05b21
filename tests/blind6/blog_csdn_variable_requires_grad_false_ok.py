# Source: https://blog.csdn.net/jacke121/article/details/82733197
"""The post's fix: create x with requires_grad=True; out.backward() then fills x.grad with
d(out)/dx = 4.5 everywhere (y is a non-leaf and is not printed)."""
import numpy as np
import torch
from torch.autograd import Variable

x = Variable(torch.ones(2, 2), requires_grad=True)
y = x + 2
# print(x.creator)  # None, a user-created Variable has no creator
# print(y.creator)
z = y * y * 3
out = z.mean()
out.backward()
print(x, y, z)
print(x.grad)  # d(out)/dx
# print(y.grad)  # y is not a leaf: its .grad is not kept
