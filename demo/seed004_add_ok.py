"""Walking the addition graph twice on purpose: the first call says so with retain_graph=True."""
import torch

x = torch.ones(1, 1, requires_grad=True)
y = x + 1
y.backward(torch.ones(1, 1), retain_graph=True)
y.backward(torch.ones(1, 1))
print(x)
print(y)
print(x.grad)
