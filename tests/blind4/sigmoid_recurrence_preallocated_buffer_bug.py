# Source: https://github.com/pytorch/pytorch/issues/36470
"""The reporter computes the recurrence f(n) = Sigmoid(f(n-1) * x) into a preallocated buffer
f = torch.zeros(10), one slot per step (`f[i] = f[i-1]*x`, then `f[i] = 1/(1.0+torch.exp(-f[i]))`),
and takes d sum(f) / dx with torch.autograd.grad. Each product saved `f[i-1]`, a view of the
buffer, for its backward, and every later slot assignment writes into the same buffer, so
autograd.grad fails ("one of the variables needed for gradient computation has been modified by
an inplace operation"). The thread was closed as a question; the reporter's own rewrite avoids the
buffer but no longer computes the recurrence. The reporter's loop is kept in a function that also
fits x to a target sum by gradient descent."""
import torch


def recurrence_sum(x, a=1, n=10):
    f = torch.zeros(n)
    f[0] = a
    for i in range(1, n):
        f[i] = f[i-1]*x
        f[i] = 1/(1.0+torch.exp(-f[i]))
    loss = torch.sum(f)
    return loss


x = torch.ones(1)
x.requires_grad_()
target = 6.0
for step in range(3):
    loss = recurrence_sum(x)
    grad = torch.autograd.grad(loss, [x])[0]  # expect: GG103
    with torch.no_grad():
        x -= 0.1 * 2 * (loss.detach() - target) * grad
