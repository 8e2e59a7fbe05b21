# Source: https://errorhandle.ai/why-should-be-the-function-backward-be-called-only-on-1-element-tensor-or-with-gradients-w-r-t-to-variable
"""The Q&A "Why should be the function backward be called only on 1 element tensor or with
gradients w.r.t to Variable?" (the Stack Overflow question re-hosted with an answer): following
the 60-minute blitz's autograd example (y = x + 2, z = y * y * 3, out = z.mean()), the asker
backwards z itself instead of the scalar out. The answer: backward computes gradients of a
scalar; for a tensor with more than one element, reduce it to a scalar first or pass the
gradient vector explicitly. The blitz example run as the asker did."""
import torch

x = torch.ones(2, 2, requires_grad=True)
y = x + 2
z = y * y * 3
out = z.mean()
print(z, out)

z.backward()  # expect: GG105
print(x.grad)
