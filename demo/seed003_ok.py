"""The autograd tutorial (Learn the Basics), with the example from the reader's notes."""
import torch

x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w)+b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)

print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")

# Computing Gradients
loss.backward()
print(w.grad)
print(b.grad)

# Disabling Gradient Tracking
z = torch.matmul(x, w)+b
print(z.requires_grad)

with torch.no_grad():
    z = torch.matmul(x, w)+b
print(z.requires_grad)

z = torch.matmul(x, w)+b
z_det = z.detach()
print(z_det.requires_grad)

# Tensor Gradients and Jacobian Products
inp = torch.eye(4, 5, requires_grad=True)
out = (inp+1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out))  # the last call: nothing walks this graph again
print(f"\nCall after zeroing gradients\n{inp.grad}")

# 代码对比 (from the notes: backward twice on one graph)
x = torch.randn(3, requires_grad=True)
y = x * 2
loss = y.sum()

# 第一次反向传播
loss.backward(retain_graph=True)
print(x.grad)  # 正常输出

# 如果没有 retain_graph=True，下面这行会报错
loss.backward()
print(x.grad)  # 梯度会累加
