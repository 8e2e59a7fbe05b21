# Source: https://blog.csdn.net/qq_41080854/article/details/121339828
"""The CSDN post "errors often met with backward": "backward on non-scalar output". n = zeros(1, 2)
is filled with n[0, 0] = m[0] ** 2 and n[0, 1] = m[1] ** 3 from m = [2, 4] (float64, requires
grad); n has two elements, and backward() without a gradient raises "grad can be implicitly
created only for scalar outputs", as the post says happens for any output of more than one
element. The post's example, with the plain n.backward() it warns about."""
import torch

m = torch.tensor([2, 4], dtype=torch.float64, requires_grad=True)
n = torch.zeros(1, 2)
n[0, 0] = m[0] ** 2
n[0, 1] = m[1] ** 3
# n.shape=[1,2] m.shape=[2]
n.backward()  # expect: GG105
print('=====non scalar output======')
print(m.grad)
