# Source: https://github.com/zylo117/Yet-Another-EfficientDet-Pytorch/issues/503
"""The BiFPN fusion re-implementation with the maintainer's fix: the in-place ReLU is applied to
self.weight.clone(), a non-leaf copy, so the fusion weights (the leaf parameter) are never
modified in place and still receive their gradient through the clone.
"""
import torch
import torch.nn as nn

onnx_export = False


class SwishImplementation(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        result = i * torch.sigmoid(i)
        ctx.save_for_backward(i)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        i = ctx.saved_tensors[0]
        sigmoid_i = torch.sigmoid(i)
        return grad_output * (sigmoid_i * (1 + i * (1 - sigmoid_i)))


class MemoryEfficientSwish(nn.Module):
    def forward(self, x):
        return SwishImplementation.apply(x)


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class Fusefeature(nn.Module):
    # replace concat with fusefeature
    def __init__(self, e=1e-4):
        super(Fusefeature, self).__init__()
        self.e = e
        self.weight = nn.Parameter(torch.ones(2, dtype=torch.float32), requires_grad=True)
        self.weight_relu = nn.ReLU(inplace=True)
        self.swish = MemoryEfficientSwish() if not onnx_export else Swish()

    def forward(self, x):
        weight = self.weight_relu(self.weight.clone())
        weight = weight / (torch.sum(weight, dim=0) + self.e)
        return self.swish(weight[0] * x[0] + weight[1] * x[1])


class Neck(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.fuse = Fusefeature()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, p4, p5):
        return self.conv(self.fuse([p4, self.up(p5)]))


neck = Neck(8)
optimizer = torch.optim.SGD(neck.parameters(), lr=0.01)
for step in range(2):
    p4, p5 = torch.randn(2, 8, 8, 8), torch.randn(2, 8, 4, 4)
    out = neck(p4, p5)
    loss = out.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
