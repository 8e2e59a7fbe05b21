# Source: https://discuss.pytorch.org/t/why-doesnt-backward-work-on-nonscalar-outputs/47777
"""The thread's answer: backward needs a scalar (a loss summed over its elements), or the vector
of the Jacobian-vector product passed explicitly; here t2.backward(torch.ones_like(t2)), which
puts d(sum t2)/dt1 = 2 * t1 in t1.grad."""
import torch

t1 = torch.Tensor([1, 3])
t1.requires_grad_(True)
t2 = t1 * t1

t2.backward(torch.ones_like(t2))
print(t1.grad)
