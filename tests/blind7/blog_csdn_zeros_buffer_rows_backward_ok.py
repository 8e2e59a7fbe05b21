# Source: https://blog.csdn.net/qq_41080854/article/details/121339828
"""The post's fix: pass backward a gradient of n's shape, here the post's own choice
n.backward(m.unsqueeze(0)) (shape [1, 2]); torch casts it to n's float32 and returns
m.grad = [2*m0*m0, 3*m1**2*m1] = [8, 192], the values the post prints."""
import torch

m = torch.tensor([2, 4], dtype=torch.float64, requires_grad=True)
n = torch.zeros(1, 2)
n[0, 0] = m[0] ** 2
n[0, 1] = m[1] ** 3
# n.shape=[1,2] m.shape=[2] m.unsqueeze(0).shape=[1,2]
n.backward(m.unsqueeze(0))
print('=====non scalar output======')
print(m.grad)
