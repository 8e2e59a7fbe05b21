# Source: https://github.com/QHfirewater/reinforcement_learning2
"""A Chinese study notebook on losses and their gradients (QHfirewater/reinforcement_learning2, "损失函数及其梯度"):
after the MSE gradient, the notebook's `p.backward()` on the three softmax probabilities fails, as `p` is not a
scalar. Fixed as the notebook does next: the gradient of each probability on its own,
`torch.autograd.grad(p[i], a, retain_graph=True)`, one row of the softmax Jacobian at a time.
"""
import torch
from torch.nn import functional as F

# MSE and its gradient, first way: autograd.grad
x = torch.ones(1)
w = torch.full([1], 2.0)
w.requires_grad_()  # 设置需要梯度
mse = F.mse_loss(x * w, torch.ones(1))
print(torch.autograd.grad(mse, [w]))

# second way: backward fills w.grad
x = torch.ones(1)
w = torch.full([1], 2.0, requires_grad=True)
print(w.grad)  # 这里显示没有梯度
mse = F.mse_loss(x * w, torch.ones(1))
mse.backward()
print(w.grad)  # 这里有了梯度

# softmax
a = torch.rand(3, requires_grad=True)
p = F.softmax(a, dim=0)
print(p)
for i in (1, 2, 0):
    print(torch.autograd.grad(p[i], a, retain_graph=True))
