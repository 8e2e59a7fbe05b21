# Source: https://duoke360.com/post/35061
"""The post's fix for a broken graph (its "protect the graph" answer): compute what is backwarded
from x itself and detach only the copy that leaves the graph (for NumPy); z.backward() then gives
x.grad = 2."""
import torch

x = torch.tensor([1.0], requires_grad=True)
y = x + 1
z_np = y.detach().numpy()  # the detached copy only leaves the graph
z = x * 2
z.backward()
print(x.grad, z_np)
