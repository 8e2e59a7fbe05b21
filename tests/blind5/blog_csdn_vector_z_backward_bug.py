# Source: https://blog.youkuaiyun.com/qq_37397652/article/details/136591668
"""The CSDN post "Pytorch报错：grad can be implicitly created only for scalar outputs": the author's
notebook cell builds y = x + 2 and z = y * y * 2 from a three-element x that requires grad, then
calls z.backward() to get dz/dx, and torch raises "grad can be implicitly created only for scalar
outputs" (the traceback the post shows). The author's cell, as run."""
import torch

x = torch.randn(3, requires_grad=True)
y = x + 2  # will create a computational graph
print(y)

z = y * y * 2
print(z)
z.backward()  # dz/dx  # expect: GG105
print(x.grad)
