# Source: http://hqwc.cn/news/133294.html
"""Working through autograd on a matrix product (fixed).

Calling ``y.backward()`` on the 3x3 product ``y = x @ b`` raises "grad can be
implicitly created only for scalar outputs": only a scalar gets an implicit
seed.  Fix: seed explicitly, ``y.backward(torch.ones_like(y))`` (the same
gradient as ``y.sum().backward()``).  The earlier ``t.backward()`` freed the
graph of ``y``, so ``y`` is rebuilt (and ``x.grad`` cleared) before the second
backward.
"""
import torch

torch.manual_seed(0)

x = torch.rand(3, 4, requires_grad=True)
b = torch.rand(4, 3, requires_grad=True)
print(x, b)
y = x @ b
t = y.sum()

# 求导数
t.backward()
print(x.grad)

# 问题1 的解决: 给非标量 y 传入与 y 同形的梯度
x.grad = None
b.grad = None
y = x @ b
y.backward(torch.ones_like(y))
print(x.grad)
