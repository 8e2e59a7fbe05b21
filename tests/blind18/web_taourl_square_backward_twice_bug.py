# Source: https://taourl.com/read-2446728.html
"""A TaoURL answer to "Error RuntimeError- Trying to backward through the graph a second time (or directly
access saved tensors after they have already been freed)": `x = torch.tensor([1.0], requires_grad=True)`,
`y = x ** 2`, then `y.backward()` twice; the first backward freed the tensors `pow` saved, so the second
raises "Trying to backward through the graph a second time". Fix (the answer's second solution, the one
that does not keep graphs alive): recompute the forward pass, `y = x ** 2`, before the second backward
(x.grad accumulates to 4).
"""
import torch

x = torch.tensor([1.0], requires_grad=True)
y = x ** 2
y.backward()  # First backward pass
print(x.grad)
y.backward()  # expect: GG101
print(x.grad)
