# Source: https://blog.csdn.net/weixin_39679367/article/details/122754199
"""The fix for the CSDN post's recurrence: each step's value is kept as its own tensor in a list
(nothing is written into a tensor that sin saved) and the buffer is built at the end with
torch.stack, so loss.backward() gets dloss/dw through every step. The post traced the error to
SinBackward; the cure is to stop writing into the tensor whose views sin saved."""
import torch

with torch.autograd.set_detect_anomaly(True):
    w = torch.rand(4, requires_grad=True)
    xs = [torch.rand(1)[0] * w[0]]
    for i in range(3):
        xs.append(torch.sin(xs[i]) * w[i])
    x = torch.stack(xs)
    loss = x.sum()
    loss.backward()
    print(w.grad)
