# Source: https://github.com/pytorch/pytorch/issues/11192
"""The reporter's two Bernoulli losses, fixed from the thread's explanation (the distribution's
logits node is computed once and shared by both log-probs, and the first backward frees it): the
second loss is taken from a freshly built `Bernoulli(p)`, so each backward walks its own graph
and `p.grad` accumulates both (not `retain_graph=True`, which would keep the first graph alive
only to work around the sharing).
"""
import torch
from torch.distributions import Bernoulli

# Case 1: two losses on one leaf backward one after the other.
t = torch.tensor(1.0, requires_grad=True)
l1 = 2 * t
l2 = 3 * t
l1.backward()  # ok
l2.backward()  # ok
print("t.grad:", t.grad)

# Case 2: the same through a distribution.
p = torch.tensor(0.2, requires_grad=True)
pi = Bernoulli(p)

l1 = 2 * pi.log_prob(torch.tensor(1.0))
l2 = 3 * Bernoulli(p).log_prob(torch.tensor(0.0))
l1.backward()  # ok
l2.backward()
print("p.grad:", p.grad)
