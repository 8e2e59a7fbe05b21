"""The addition operator saves no buffer: the second backward does not raise, x.grad doubles."""
import torch

x = torch.ones(1, 1, requires_grad=True)
y = x + 1
y.backward(torch.ones(1, 1))
y.backward(torch.ones(1, 1))  # expect: GG102
print(x)
print(y)
print(x.grad)
