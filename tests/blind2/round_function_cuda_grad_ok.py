# Source: https://github.com/sonack/How_to_write_cuda_extensions_in_pytorch/issues/2
"""The rounding Function test fixed as the answer explains ("because you write x=x.cuda(), then x
became a non-leaf node which will not preserve grad"): the leaf is kept under its own name and
its .grad is read, the moved copy (.double() standing for .cuda()) goes through the Function."""
import torch
from torch.autograd import Function


class RoundFunction(Function):
    @staticmethod
    def forward(ctx, input):
        return torch.round(input)

    @staticmethod
    def backward(ctx, grad_output):
        grad_in = torch.zeros_like(grad_output)
        grad_in.copy_(grad_output)  # round_backward_wrapper(grad_output, grad_in, grad_output.numel())
        return grad_in


roundFunc = RoundFunction.apply
x_leaf = torch.randn(2, 2, requires_grad=True)
x = x_leaf.double()
y = roundFunc(x)
y.backward(torch.ones_like(y))
print(x_leaf.grad)
