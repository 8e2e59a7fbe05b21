# Source: http://readke.com/c/12263VZ62021.html
"""The blog post's example of torch.autograd.grad: a = Variable(FloatTensor([1, 2, 3]),
requires_grad=True), b = 3 * a, then autograd.grad(b, a) to get db/da. b has three elements and
no grad_outputs is given, so autograd.grad fails ("grad can be implicitly created only for scalar
outputs"); the post explains with autograd.grad's docstring that grad_outputs holds the gradients
with respect to each output and must be given for a non-scalar output. The post's interactive
session is kept as a small function that returns the derivative for a few inputs."""
import torch
from torch.autograd import Variable


def derivative_of_triple(values):
    a = Variable(torch.FloatTensor(values), requires_grad=True)
    b = 3 * a
    grad = torch.autograd.grad(b, a)  # expect: GG105
    return grad[0]


for values in ([1, 2, 3], [0.5, -1.0, 4.0]):
    print(derivative_of_triple(values))
