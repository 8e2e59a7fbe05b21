# Source: https://devgem.io/posts/understanding-pytorch-s-retain-graph-true-error
"""The post's fix: the first backward keeps the shared graph, y1.backward(retain_graph=True), so
y2.backward() can walk it again; x.grad and y.grad hold the sum of both derivatives."""
import torch

x = torch.tensor([2.0], requires_grad=True)
y = torch.tensor([3.0], requires_grad=True)
f = x + y
z = 2 * f
y1 = z ** 2
y2 = z ** 3
y1.backward(retain_graph=True)
y2.backward()
print(x.grad, y.grad)
