# Source: https://blog.csdn.net/weixin_39679367/article/details/122754199
"""The CSDN post on hard-to-spot in-place errors: a recurrence written into a preallocated buffer,
x[0] = rand * w[0], then x[i+1] = sin(x[i]) * w[i] for three steps, loss = x.sum(). sin saves its
input x[i], a view of x; the next step's assignment x[i+1] = ... writes into x and bumps the
version counter that view shares, so loss.backward() raises "one of the variables needed for
gradient computation has been modified by an inplace operation" (the post's anomaly-detection run
points at SinBackward). The post's program, inside the anomaly-detection block it used."""
import torch

with torch.autograd.set_detect_anomaly(True):
    x = torch.zeros(4)
    w = torch.rand(4, requires_grad=True)
    x[0] = torch.rand(1) * w[0]
    for i in range(3):
        x[i+1] = torch.sin(x[i]) * w[i]
    loss = x.sum()
    loss.backward()  # expect: GG103
