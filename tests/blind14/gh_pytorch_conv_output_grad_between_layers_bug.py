# Source: https://github.com/pytorch/pytorch/issues/2384
"""The reporter wants to see how the gradient is passed between layers: a Conv2d's output is summed
into a loss, backwarded, and both `input.grad` (a leaf made with requires_grad=True: filled) and
`output.grad` are printed; `output` is not a leaf, so torch warns "The .grad attribute of a Tensor
that is not a leaf Tensor is being accessed" and returns None (printed; the program runs on). The
fix (albanD) is `output.retain_grad()` before `loss.backward()`. `Variable` is written as the
plain tensor it now is; the sizes are shrunk.
"""
import torch

input = torch.randn(4, 3, 12, 12, requires_grad=True)
m = torch.nn.Conv2d(3, 16, 5)
output = m(input)

loss = torch.sum(output)  # define loss to perform backprop
m.zero_grad()
loss.backward()

print(type(input))
print(input.grad.size())
print(type(output))
print(output.grad)  # expect: GG106
