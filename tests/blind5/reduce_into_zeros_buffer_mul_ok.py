# Source: https://github.com/pytorch/pytorch/issues/74874
"""The reporter's reduction with the partial results kept in a Python list instead of written into
slots of one zeros buffer (the fix that fits the cause): each op(a, b) saves its own operands,
and nothing writes into them afterwards, so autograd.grad works for op=torch.mul as for
op=torch.add."""
import torch
from torch import Tensor


def reduce(x: Tensor, y: Tensor, z: Tensor, op) -> Tensor:
    slots = [x, y, None, z, None]

    slots[2] = op(slots[0], slots[1])
    slots[4] = op(slots[2], slots[3])
    return slots[4]


inputs = [
    torch.randn((1,), requires_grad=True),
    torch.randn((1,), requires_grad=True),
    torch.randn((1,), requires_grad=True),
]

out = reduce(*inputs, op=torch.add)
grad = torch.autograd.grad(out, inputs, torch.randn_like(out))
print(f'add grad => {grad}')

out = reduce(*inputs, op=torch.mul)
grad = torch.autograd.grad(out, inputs, torch.randn_like(out))
print(f'mul grad => {grad}')
