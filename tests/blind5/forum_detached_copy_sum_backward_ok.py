# Source: https://github.com/pytorch/pytorch/issues/92586
"""The fix that fits the cause (the reporter's `requires_grad = True` variant runs but leaves t
without a gradient): the copy is made with `t.clone()`, which autograd records, so the sum's
backward reaches t (t.grad is all ones)."""
import torch

t = torch.randn(5, requires_grad=True)


def func(t):
    t_copy = t.clone()
    return t_copy


func(t).sum().backward()
print(t.grad)
