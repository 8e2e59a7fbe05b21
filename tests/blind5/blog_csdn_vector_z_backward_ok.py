# Source: https://blog.youkuaiyun.com/qq_37397652/article/details/136591668
"""The post's fix: z is a vector, so backward is given the vector v of the vector-Jacobian
product, `z.backward(v)` with the post's v = [0.1, 1.0, 0.0001]; x.grad then holds v^T dz/dx."""
import torch

x = torch.randn(3, requires_grad=True)
y = x + 2  # will create a computational graph
print(y)

z = y * y * 2
print(z)
v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float32)
z.backward(v)  # dz/dx
print(x.grad)
