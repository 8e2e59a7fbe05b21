# Source: https://github.com/pytorch/pytorch/issues/7425
"""The reporter's "grad of output with respect to inputs functions on cpu but not gpu": test_cpu()
reads t.grad of the input leaf, test_gpu() reads t.grad of torch.ones(..., requires_grad=True)
.cuda(), the non-leaf result of the move, and gets None (printed, nothing else uses it). This
CPU-only copy moves module and input with .double() where the report calls .cuda(), a cast that
autograd records the same way."""
import torch.nn as nn
import torch
from torch.autograd import grad

class testModule(nn.Module):
    def __init__(self):
        super(testModule, self).__init__()
        self.lin = nn.Linear(10, 1)

    def forward(self, x):
        return self.lin(x)

def test_cpu():
    t = torch.ones([1, 10], requires_grad=True)
    mod = testModule()
    output = mod(t)
    output[0].backward()
    test = t.grad
    return test

def test_gpu():
    mod = testModule().double()
    t = torch.ones([1, 10], requires_grad=True).double()
    output = mod(t)
    output[0].backward()
    test = t.grad  # expect: GG106
    return test

print(test_cpu())

print(test_gpu())
