# Source: https://github.com/pytorch/pytorch/issues/134398
"""The reporter's code following the warning's advice: t3.retain_grad() is called on the non-leaf
before the backward, so reading t3.grad afterwards gives its gradient (and no warning)."""
import torch

t1 = torch.tensor(5., requires_grad=True)  # Leaf tensor
t2 = torch.tensor(2., requires_grad=True)  # Leaf tensor

t3 = t1 + t2  # Non-leaf tensor
t3.retain_grad()

t3.backward()

print(t3.grad)
print(t1.grad, t2.grad)
