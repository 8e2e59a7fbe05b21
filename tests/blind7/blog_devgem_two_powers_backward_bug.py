# Source: https://devgem.io/posts/understanding-pytorch-s-retain-graph-true-error
"""The devgem post "Understanding PyTorch's 'retain_graph=True' Error": f = x + y, z = 2 * f,
then y1 = z ** 2 and y2 = z ** 3 share the graph below z; y1.backward() frees it and y2.backward()
raises "Trying to backward through the graph a second time". The post's error case."""
import torch

x = torch.tensor([2.0], requires_grad=True)
y = torch.tensor([3.0], requires_grad=True)
f = x + y
z = 2 * f
y1 = z ** 2
y2 = z ** 3
y1.backward()
y2.backward()  # expect: GG101
print(x.grad, y.grad)
