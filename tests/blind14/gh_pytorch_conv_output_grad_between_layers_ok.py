# Source: https://github.com/pytorch/pytorch/issues/2384
"""The reporter's look at the gradient passed between layers, with albanD's fix: `output.retain_grad()`
is called before `loss.backward()`, so the Conv2d output's `.grad` is populated and printed along
with the input's. The sizes are shrunk.
"""
import torch

input = torch.randn(4, 3, 12, 12, requires_grad=True)
m = torch.nn.Conv2d(3, 16, 5)
output = m(input)
output.retain_grad()

loss = torch.sum(output)  # define loss to perform backprop
m.zero_grad()
loss.backward()

print(type(input))
print(input.grad.size())
print(type(output))
print(output.grad.size())
