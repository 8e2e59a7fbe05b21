# Source: https://github.com/pytorch/pytorch/issues/11192
"""The reporter compares two losses on one leaf, which backward one after the other without
complaint (`l1 = 2 * t; l2 = 3 * t`), with two losses taken from one `Bernoulli(p)` policy:
`l1 = 2 * pi.log_prob(1.)`, `l2 = 3 * pi.log_prob(2.)`, `l1.backward()` then `l2.backward()`
(torch 2.13 validates the support, so the second value is 0. here).
The distribution computes its logits from `p` once (a cached lazy property) and both log-probs
use that node, whose saved tensors the first backward frees, so the second raises "Trying to
backward through the graph a second time", as the maintainers' explanation of the shared node
implies. The `_ok` twin builds the distribution again for the second loss.
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
l2 = 3 * pi.log_prob(torch.tensor(0.0))
l1.backward()  # ok
l2.backward()  # expect: GG101
print("p.grad:", p.grad)
