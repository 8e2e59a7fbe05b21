# Source: https://github.com/pytorch/pytorch/issues/114505
"""pytorch/pytorch issue 114505 ("An inplace operation involved in torch.nn.functional.softplus").

The reporter's `func` fills a preallocated output column by column:

    b = torch.zeros_like(a)
    b[:, 0] = a[:, 0]
    b[:, 1] = torch.nn.Softplus()(b[:, 0].clone())

and asks for `torch.autograd.functional.jacobian(func, ...)`. Softplus saves its input, which is
the view `b[:, 0]`; the next statement writes `b[:, 1]` in place. Views share one version counter
with their base, so writing a different column still bumps the version Softplus recorded, and the
backward run by `jacobian` raises "one of the variables needed for gradient computation has been
modified by an inplace operation: [torch.FloatTensor [3]], which is output 0 of
AsStridedBackward0, is at version 2; expected version 1" (the maintainer's answer: autograd has a
single version counter for the whole storage).

Fix (in the _ok twin, as the reporter found): feed Softplus a copy, `b[:, 0].clone()` (building the
columns separately and `torch.stack`-ing them works as well).
"""
import torch


def func(a):
    b = torch.zeros_like(a)
    b[:, 0] = a[:, 0]
    b[:, 1] = torch.nn.Softplus()(b[:, 0].clone())
    return b


torch.manual_seed(0)
# the reporter called torch.autograd.set_detect_anomaly(True); scoped here to this call
with torch.autograd.detect_anomaly():
    print(torch.autograd.functional.jacobian(func, torch.randn(3, 2)))
