# Source: https://github.com/pytorch/pytorch/issues/134398
"""The reporter's code: t3 = t1 + t2 is not a leaf, and printing t3.grad (before and after the
backward) reads None with the non-leaf warning; nothing then uses the None, so the program
runs on."""
import torch

t1 = torch.tensor(5., requires_grad=True)  # Leaf tensor
t2 = torch.tensor(2., requires_grad=True)  # Leaf tensor

t3 = t1 + t2  # Non-leaf tensor

print(t3.grad)  # expect: GG106

t3.backward()

print(t3.grad)  # expect: GG106
print(t1.grad, t2.grad)
