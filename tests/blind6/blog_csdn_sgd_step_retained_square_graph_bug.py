# Source: https://blog.csdn.net/nlh_tutu/category_11677089.html
"""The CSDN post "one of the variables needed for gradient computation has been modified by an
inplace operation": the author minimises f = (x**2).sum() over a leaf x with torch.optim.SGD, but
builds f once before the loop and calls `f.backward(retain_graph=True)` on every iteration. The
retained graph's PowBackward saved x, optimizer.step() updates x in place, and the second backward
raises the in-place error. The author's loop, with fewer iterations."""
import torch
import torch.optim

x = torch.tensor([3, 6], dtype=torch.float32)
x.requires_grad_(True)
optimizer = torch.optim.SGD([x], lr=0.1, momentum=0)
f = (x**2).sum()
for i in range(10):
    optimizer.zero_grad()
    f.backward(retain_graph=True)  # expect: GG103
    optimizer.step()
    print(x.grad, x)
