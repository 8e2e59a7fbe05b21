# Source: https://github.com/pytorch/pytorch/issues/13113
"""The reporter's "Question about cuda grad": `a = torch.tensor([1., 2., 3.], requires_grad=True)`
then `a = a.cuda()`, so the name a now holds the copy, a non-leaf; after `b = a ** 2`,
`c = b.mean(0)`, `c.backward()`, `print(a.grad)` prints None (torch 2.13 also warns that the .grad
of a non-leaf is being read). Moving the tensor first and setting requires_grad after gives the
gradient, as the reporter found. On CPU the device copy is the cast `.to(torch.float64)`, which
autograd records the same way (a ToCopyBackward node)."""
import torch

a = torch.tensor([1., 2., 3.], requires_grad=True)
a = a.to(torch.float64)  # a.cuda() in the report
b = a ** 2
c = b.mean(0)
c.backward()
print(a.grad)  # expect: GG106
