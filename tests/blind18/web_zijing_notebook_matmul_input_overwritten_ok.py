# Source: https://github.com/Zijing5/PyTorch_AboutSomeDetails
"""A Chinese study notebook on in-place operations ("对求梯度阶段用到的张量不能使用替代操作"): after
initialising a leaf through `w.data.normal_()`, it builds `d = torch.matmul(x, w1)` and
`f = torch.matmul(d, w2)`, then overwrote `d[:] = 4`, which the second matmul saved for the gradient of `w2`.
The notebook states the rule but gives no fixed code; this fix writes the new values into a copy,
`d_new = d.clone()`, and `f.backward()` runs (w1.grad = 9 * x, w2.grad = d = 5).
"""
import torch

w = torch.FloatTensor(10)
w.requires_grad = True
w.data.normal_()
print(w.data)

x = torch.tensor([1., 3.])
w1 = torch.tensor([[2.], [1.]], requires_grad=True)
w2 = torch.tensor([9.], requires_grad=True)
print(w2.is_leaf)

d = torch.matmul(x, w1)
f = torch.matmul(d, w2)
d_new = d.clone()
d_new[:] = 4  # the new values go into a copy; d keeps what matmul saved
# d是计算df/dw2梯度值依赖的节点
f.backward()
print(w1.grad, w2.grad, d_new)
