# Source: https://www.pythonclear.com/errors/runtimeerror-grad-can-be-implicitly-created-only-for-scalar-outputs/
"""The post's fix ("Using gradient"): pass the gradient of the non-scalar output explicitly,
`A.backward(gradient=torch.ones_like(A))`, which gives the same x.grad and y.grad as backwarding
`A.sum()`."""
import torch

x = torch.tensor([5., 5.], requires_grad=True)
y = torch.tensor([8., 8.], requires_grad=True)

A = x * y

# calculate the gradient
A.backward(gradient=torch.ones_like(A))

print(x.grad)
print(y.grad)
