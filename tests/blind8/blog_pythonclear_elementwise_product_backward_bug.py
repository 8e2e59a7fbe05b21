# Source: https://www.pythonclear.com/errors/runtimeerror-grad-can-be-implicitly-created-only-for-scalar-outputs/
"""The pythonclear post on "RuntimeError: grad can be implicitly created only for scalar
outputs": two tensors that require grad, `x = torch.tensor([5., 5.])` and
`y = torch.tensor([8., 8.])`, their elementwise product `A = x*y`, then `A.backward()` to get
`x.grad` and `y.grad`. A has two elements, so backward cannot create its gradient implicitly. The
post's program, as written there."""
import torch

x = torch.tensor([5., 5.], requires_grad=True)
y = torch.tensor([8., 8.], requires_grad=True)

A = x * y

# calculate the gradient
A.backward()  # expect: GG105

print(x.grad)
print(y.grad)
