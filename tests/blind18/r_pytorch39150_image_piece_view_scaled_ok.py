# Source: https://github.com/pytorch/pytorch/issues/39150
"""pytorch/pytorch#39150: the reporter sliced images into pieces and passed them to a network separately; scaling
a piece of an image that requires grad in place, `bar = foo[10:, 10:]; bar *= 10`, writes into a view of a leaf.
Fixed by scaling out of place, `bar = foo[10:, 10:] * 10`: the piece is a new node of the graph and `foo` stays
a leaf that receives the gradient (10 on the sliced corner, 0 elsewhere).
"""
import torch

foo = torch.ones(20, 20).requires_grad_()
bar = foo[10:, 10:] * 10
bar.sum().backward()
print(foo.grad)
