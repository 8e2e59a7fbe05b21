# Source: https://blog.csdn.net/ywcpig/article/details/121807760
"""The CSDN post "InplaceABN Backward Error": after modifying a network built from InPlaceABN
blocks (batch norm + activation computed in place, which saves its *output* and recomputes the
input from it in backward), training failed with "one of the variables needed for gradient
computation has been modified by an inplace operation: [..., 256, 7, 7]], which is output 0 of
InPlaceABNBackward, is at version 3; expected version 1"; the cause was consecutive in-place
operations on the InPlaceABN output. InPlaceABN (the inplace_abn package) is replaced by a local
autograd Function doing the same tensor operations: normalise and activate the input in place,
mark it dirty, save the output. The modified residual block adds the shortcut in place to that
output and applies an in-place leaky ReLU: version 3."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class InPlaceABNFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps, slope):
        mean = x.mean(dim=(0, 2, 3), keepdim=True)
        std = (x.var(dim=(0, 2, 3), unbiased=False, keepdim=True) + eps).sqrt()
        x.sub_(mean).div_(std).mul_(weight.view(1, -1, 1, 1)).add_(bias.view(1, -1, 1, 1))
        if slope is not None:
            F.leaky_relu_(x, slope)
        ctx.slope = slope
        ctx.mark_dirty(x)
        ctx.save_for_backward(x, weight, bias, std)
        return x

    @staticmethod
    def backward(ctx, grad_y):
        y, weight, bias, std = ctx.saved_tensors  # expect: GG103
        w, b = weight.view(1, -1, 1, 1), bias.view(1, -1, 1, 1)
        if ctx.slope is None:
            z, dz = y, grad_y
        else:
            z = torch.where(y >= 0, y, y / ctx.slope)
            dz = torch.where(y >= 0, grad_y, grad_y * ctx.slope)
        xhat = (z - b) / w
        dxhat = dz * w
        dx = (dxhat - dxhat.mean(dim=(0, 2, 3), keepdim=True)
              - xhat * (dxhat * xhat).mean(dim=(0, 2, 3), keepdim=True)) / std
        return dx, (dz * xhat).sum(dim=(0, 2, 3)), dz.sum(dim=(0, 2, 3)), None, None


class InPlaceABN(nn.Module):
    def __init__(self, channels, activation="leaky_relu", slope=0.01, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.slope = slope if activation == "leaky_relu" else None
        self.eps = eps

    def forward(self, x):
        return InPlaceABNFunction.apply(x, self.weight, self.bias, self.eps, self.slope)


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = InPlaceABN(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = InPlaceABN(channels, activation="identity")

    def forward(self, x):
        shortcut = x
        out = self.bn2(self.conv2(self.bn1(self.conv1(x))))
        out += shortcut                     # in place on InPlaceABN's saved output
        return F.leaky_relu_(out, 0.01)     # ... and again


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), ResidualBlock(8), ResidualBlock(8),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
criterion = nn.CrossEntropyLoss()

for step in range(2):
    images, labels = torch.randn(4, 3, 7, 7), torch.randint(0, 5, (4,))
    optimizer.zero_grad()
    loss = criterion(model(images), labels)
    loss.backward()
    optimizer.step()
    print(step, loss.item())
