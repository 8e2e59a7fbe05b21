# Source: http://readke.com/c/12263VZ62021.html
"""The blog post's torch.autograd.grad example with the fix it explains: for the three-element
output b = 3 * a, grad_outputs=torch.ones_like(b) gives the gradient with respect to each output,
so autograd.grad returns db/da (all threes). The post's interactive session is kept as a small
function that returns the derivative for a few inputs."""
import torch
from torch.autograd import Variable


def derivative_of_triple(values):
    a = Variable(torch.FloatTensor(values), requires_grad=True)
    b = 3 * a
    grad = torch.autograd.grad(b, a, grad_outputs=torch.ones_like(b))
    return grad[0]


for values in ([1, 2, 3], [0.5, -1.0, 4.0]):
    print(derivative_of_triple(values))
