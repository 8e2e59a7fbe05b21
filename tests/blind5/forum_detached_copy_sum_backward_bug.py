# Source: https://github.com/pytorch/pytorch/issues/92586
"""The reporter's first snippet: func copies its input with `t.detach()` and returns the copy;
`func(t).sum().backward()` raises "element 0 of tensors does not require grad and does not have a
grad_fn" (the report then shows that setting `t_copy.requires_grad = True` makes backward "succeed",
which the maintainers explained only starts a new leaf: t still gets no gradient)."""
import torch

t = torch.randn(5, requires_grad=True)


def func(t):
    t_copy = t.detach()
    return t_copy


func(t).sum().backward()  # expect: GG104
print(t.grad)
