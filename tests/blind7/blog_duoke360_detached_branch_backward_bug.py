# Source: https://duoke360.com/post/35061
"""The duoke360 post "PyTorch runtime error - element 0 of tensors does not require grad and does
not have a grad_fn", its cause 2, a broken graph: x requires grad, y = x.detach() cuts the graph,
z = y * 2 is computed from the detached copy, and z.backward() raises "element 0 of tensors does
not require grad and does not have a grad_fn". The post's example."""
import torch

x = torch.tensor([1.0], requires_grad=True)
y = x.detach()  # cuts the graph
z = y * 2
z.backward()  # expect: GG104
print(x.grad)
