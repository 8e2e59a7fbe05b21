# Source: https://github.com/pytorch/pytorch/issues/74874
"""A reduction written into a preallocated buffer (pytorch #74874): the inputs are copied into
slots of `tensor = torch.zeros(5)` and each partial result is written into the next slot,
`tensor[2] = op(tensor[0], tensor[1])`, `tensor[4] = op(tensor[2], tensor[3])`. With op=torch.add
it works, as the reporter says; with an operator whose backward needs its operands, here
torch.mul, autograd.grad fails ("one of the variables needed for gradient computation has been
modified by an inplace operation"): the multiplication saves its operands, views of the buffer,
and every later slot assignment writes into that same buffer. The reporter's function and driver,
run with op=torch.add and then op=torch.mul (the failing operator is not in the stored excerpt of
the issue)."""
import torch
from torch import Tensor


def reduce(x: Tensor, y: Tensor, z: Tensor, op) -> Tensor:
    tensor = torch.zeros((5,), dtype=torch.float32, requires_grad=False)
    tensor[0] = x
    tensor[1] = y
    tensor[3] = z

    tensor[2] = op(tensor[0], tensor[1])
    tensor[4] = op(tensor[2], tensor[3])
    return tensor[4]


inputs = [
    torch.randn((1,), requires_grad=True),
    torch.randn((1,), requires_grad=True),
    torch.randn((1,), requires_grad=True),
]

out = reduce(*inputs, op=torch.add)
grad = torch.autograd.grad(out, inputs, torch.randn_like(out))
print(f'add grad => {grad}')

out = reduce(*inputs, op=torch.mul)
grad = torch.autograd.grad(out, inputs, torch.randn_like(out))  # expect: GG103
print(f'mul grad => {grad}')
