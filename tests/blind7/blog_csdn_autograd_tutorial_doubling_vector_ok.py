# Source: https://blog.csdn.net/weixin_42419002/article/details/93138005
"""The post's fix: y is not a scalar, so autograd cannot form the full Jacobian; passing the
vector v of a vector-Jacobian product, y.backward(v), gives x.grad = v * dy/dx."""
import torch

x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
print(y)

v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(v)
print(x.grad)
