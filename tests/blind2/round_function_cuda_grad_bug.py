# Source: https://github.com/sonack/How_to_write_cuda_extensions_in_pytorch/issues/2
"""The reporter's rounding Function with a hand-written backward (a CUDA kernel in the report),
tested on x = torch.randn(2, 2, requires_grad=True) followed by x = x.cuda(): after
y.backward(torch.ones_like(y)), print(x.grad) shows None, because x now names the non-leaf copy.
The Function is written in today's static forward/backward form (the report's legacy instance
Functions no longer run), its kernels as a straight-through torch expression, and .cuda() is
replaced by .double(), a cast that autograd records the same way."""
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
x = torch.randn(2, 2, requires_grad=True)
x = x.double()
y = roundFunc(x)
y.backward(torch.ones_like(y))
print(x.grad)  # expect: GG106
