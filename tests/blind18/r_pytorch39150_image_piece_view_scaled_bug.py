# Source: https://github.com/pytorch/pytorch/issues/39150
"""pytorch/pytorch#39150: the reporter sliced images into pieces and passed them to a network separately; a piece
of an image that requires grad, `bar = foo[10:, 10:]`, was scaled in place, `bar *= 10`, then
`bar.sum().backward()`. The reporter's torch (1.5) failed only in backward ("leaf variable has been moved into the
graph interior") and asked for an error at the write; torch 2.13 gives it there: "a view of a leaf Variable that
requires grad is being used in an in-place operation". The fix: scale out of place, `bar = foo[10:, 10:] * 10`,
so the piece is a new node of the graph and `foo` stays a leaf that receives the gradient.
"""
import torch

foo = torch.ones(20, 20).requires_grad_()
bar = foo[10:, 10:]
bar *= 10  # expect: GG108
bar.sum().backward()
print(foo.grad)
