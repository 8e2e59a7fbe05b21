# Source: https://github.com/pytorch/pytorch/issues/22860
"""A user creates `x = torch.tensor([[1., 2., 3., 4.], ...], requires_grad=True)`, then moves it with
`x = x.to(device)` where `device` is `cuda:0` when available, computes `function = 10 * (x ** 2).sum()`,
calls `function.backward()` and prints `x.grad`: on CUDA it prints `None` (and today torch warns "The
.grad attribute of a Tensor that is not a leaf Tensor is being accessed"), on CPU it prints the
gradient. The copy made by `.to('cuda:0')` is a non-leaf; the leaf stayed on the CPU. The move is
written `x.to(device, copy=True)` so that the CPU run makes the same non-leaf copy as the CUDA one.
The excerpt of the thread gives no answer; the fix maintainers gave the same question elsewhere
(#8287, #560): create the leaf on the device, `torch.tensor(..., requires_grad=True, device=device)`.
"""
import torch

print( torch.__version__ )
print( torch.cuda.is_available() )
print( torch.version.cuda )

x = torch.tensor(
    [[1.,  2.,  3.,  4.],
     [5.,  6.,  7.,  8.],
     [9., 10., 11., 12.]], requires_grad=True)

#######
device = torch.device('cuda:0'
                      if torch.cuda.is_available()
                      else 'cpu')
x = x.to(device, copy=True)  # stands in for the cuda:0 copy
#######

function = 10 * (x ** 2).sum()

function.backward()

print(x.grad, '<- gradient')  # expect: GG106
