# Source: https://blog.csdn.net/qq_62533893/article/details/130701671
"""The CSDN note from working through Dive into Deep Learning: x = torch.ones(2, requires_grad=True),
z = x + 2, then z.backward() to get dz/dx raises "grad can be implicitly created only for scalar
outputs" (z holds two elements). The author's cell, as run."""
import torch

x = torch.ones(2, requires_grad=True)
print(x)
z = x + 2
print(z)
z.backward()  # expect: GG105
print(x.grad)
