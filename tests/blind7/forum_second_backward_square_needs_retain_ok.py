# Source: https://discuss.pytorch.org/t/multiple-call-to-backward-still-works-when-retain-graph-false-why/9475
"""The thread's rule: a graph walked twice must be kept by every backward but the last,
y.backward(..., retain_graph=True); the multiplication's saved x then survives the first walk and
the second y.backward(gradient) adds its gradient to x.grad."""
import torch
from torch.autograd import Variable

x = Variable(torch.ones(2, 2), requires_grad=True)
y = x * x
y.backward(torch.ones(2, 2), retain_graph=True)
print(x.grad)
z = y * y
print(z)
gradient = torch.randn(2, 2)
y.backward(gradient)
print(x.grad)
