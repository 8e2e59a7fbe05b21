# Source: https://blog.csdn.net/qq_62533893/article/details/130701671
"""The post's fix: reduce z to a scalar first, `z.sum().backward()`; x.grad is then tensor([1., 1.])."""
import torch

x = torch.ones(2, requires_grad=True)
print(x)
z = x + 2
print(z)
z.sum().backward()
print(x.grad)
