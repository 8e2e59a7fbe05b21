# Source: https://github.com/Zijing5/PyTorch_AboutSomeDetails
"""A Chinese study notebook on in-place operations ("对求梯度阶段用到的张量不能使用替代操作"): after
initialising a leaf through `w.data.normal_()`, it builds `d = torch.matmul(x, w1)` and
`f = torch.matmul(d, w2)`, then overwrites `d[:] = 4` and calls `f.backward()`; the second matmul saved `d`
for the gradient of `w2`, so torch raises "one of the variables needed for gradient computation has been
modified by an inplace operation" (the traceback saved in the notebook: CopySlices, version 2, expected 1).
The notebook states the rule but gives no fixed code; `_ok` writes the new values into a copy of `d`.
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
d[:] = 4
# d是计算df/dw2梯度值依赖的节点
f.backward()  # expect: GG103
print(w1.grad, w2.grad)
