# Source: https://taourl.com/read-2446728.html
"""A TaoURL answer to "Error RuntimeError- Trying to backward through the graph a second time (or directly
access saved tensors after they have already been freed)": `x = torch.tensor([1.0], requires_grad=True)`,
`y = x ** 2`, then `y.backward()` twice, the second through the graph the first freed. Fixed as the answer's
second solution (no graph kept alive): the forward pass `y = x ** 2` is recomputed before the second
backward (x.grad accumulates to 4).
"""
import torch

x = torch.tensor([1.0], requires_grad=True)
y = x ** 2
y.backward()  # First backward pass
print(x.grad)
y = x ** 2
y.backward()  # Second backward pass, on a fresh graph
print(x.grad)
