# Source: https://errorhandle.ai/why-should-be-the-function-backward-be-called-only-on-1-element-tensor-or-with-gradients-w-r-t-to-variable
"""The answer's fix: backward from the scalar (out = z.mean(), as in the tutorial), or pass
z's upstream gradient; here the scalar, which gives d(out)/dx = 4.5 per element."""
import torch

x = torch.ones(2, 2, requires_grad=True)
y = x + 2
z = y * y * 3
out = z.mean()
print(z, out)

out.backward()
print(x.grad)
