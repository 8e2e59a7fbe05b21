# Source: https://github.com/pytorch/pytorch/issues/7425
"""The reporter's CPU/GPU input-gradient test with the input created on its device (dtype here,
standing for device='cuda') with requires_grad=True, so the tensor whose .grad is read is the
leaf in both functions."""
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
    t = torch.ones([1, 10], dtype=torch.float64, requires_grad=True)
    output = mod(t)
    output[0].backward()
    test = t.grad
    return test

print(test_cpu())

print(test_gpu())
