# Source: https://blog.csdn.net/Arthur_Holmes/article/details/104212325
"""The fix for the CSDN post's detach() run: a detached tensor that is going to be modified in
place must be a copy, `out.detach().clone()`, so zeroing it leaves the sigmoid output autograd
saved untouched, and out.sum().backward() gives a.grad = sigmoid'(a)."""
import torch

a = torch.tensor([1, 2, 3.], requires_grad=True)
print(a.grad)
out = a.sigmoid()
print(out)

c = out.detach().clone()  # its own storage and version counter
print(c)
c.zero_()
print(c)
print(out)

out.sum().backward()
print(a.grad)
