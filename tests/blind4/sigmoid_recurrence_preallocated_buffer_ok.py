# Source: https://github.com/pytorch/pytorch/issues/36470
"""The reporter's recurrence f(n) = Sigmoid(f(n-1) * x) with the right fix (the thread gave none,
and the reporter's rewrite changes the computation): each step's value is appended to a Python
list and the list is stacked at the end, so no tensor a product saved is written to afterwards and
autograd.grad returns d sum(f) / dx of the same recurrence. The loop is kept in a function that
also fits x to a target sum by gradient descent."""
import torch


def recurrence_sum(x, a=1, n=10):
    f = [torch.full((1,), float(a))]
    for i in range(1, n):
        f_i = f[i-1]*x
        f.append(1/(1.0+torch.exp(-f_i)))
    loss = torch.sum(torch.stack(f))
    return loss


x = torch.ones(1)
x.requires_grad_()
target = 6.0
for step in range(3):
    loss = recurrence_sum(x)
    grad = torch.autograd.grad(loss, [x])[0]
    with torch.no_grad():
        x -= 0.1 * 2 * (loss.detach() - target) * grad
