# Source: http://hqwc.cn/news/133294.html
"""Working through autograd on a matrix product: ``y.backward()`` on a 3x3 result.

The author builds ``y = x @ b`` from two ``requires_grad`` matrices (3x4 and
4x3), reduces it with ``t = y.sum()``, calls ``t.backward()`` and reads
``x.grad``.  "Problem 1" of the post is then to call ``backward()`` on ``y``
itself.  ``y`` is a 3x3 tensor, so autograd cannot create the implicit seed
gradient: "grad can be implicitly created only for scalar outputs".

Fix (the post's explanation: only a scalar can be differentiated implicitly):
give ``backward`` the seed explicitly, ``y.backward(torch.ones_like(y))``, which
is the same as ``y.sum().backward()``.  Because ``t.backward()`` already freed the
graph of ``y``, the fixed version rebuilds ``y`` before the explicit-seed call.
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

# 问题1: 让y运行backward方法
y.backward()  # expect: GG105
print(x.grad)
