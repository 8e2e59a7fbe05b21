# Source: https://blog.csdn.net/weixin_42419002/article/details/93138005
"""The CSDN notes on the 60-minute blitz "AUTOGRAD: automatic differentiation": y = x * 2 is
doubled until its norm reaches 1000, and y, a vector of three elements, is backwarded with no
argument. The post's comment records what torch says without the vector v: "grad can be
implicitly created only for scalar outputs". The post's cell, without v."""
import torch

x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
print(y)

y.backward()  # expect: GG105
print(x.grad)
