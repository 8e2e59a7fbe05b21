# Source: https://github.com/osmr/imgclsmob/issues/5
"""Training imgclsmob's SqueezeNext (pytorch/models/squeezenext.py, sqnxt23v5_w2, PyTorch 0.4.1):
every SqnxtConv ends with an in-place ReLU, and SqnxtUnit.forward passes the identity branch
through its own in-place `self.activ` again (`identity = self.activ(identity)`). When the identity
is the output of identity_conv, or the unit's input, it already is the output of an in-place ReLU
that autograd saved for that ReLU's backward; the second in-place ReLU overwrites it, so
loss.backward() fails ("one of the variables needed for gradient computation has been modified
by an inplace operation"; the reporter: an `inplace=False` ReLU there is enough, and notes the
ReLU -> ReLU stacking). The model is the repository's, with two stages and small widths; random
32x32 images stand in for the dataset."""
import torch
import torch.nn as nn


class SqnxtConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding=(0, 0)):
        super(SqnxtConv, self).__init__()
        self.conv = nn.Conv2d(in_channels=in_channels, out_channels=out_channels, kernel_size=kernel_size,
                              stride=stride, padding=padding)
        self.bn = nn.BatchNorm2d(num_features=out_channels)
        self.activ = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = self.activ(x)
        return x


class SqnxtUnit(nn.Module):
    def __init__(self, in_channels, out_channels, stride):
        super(SqnxtUnit, self).__init__()
        if stride == 2:
            reduction_den = 1
            self.resize_identity = True
        elif in_channels > out_channels:
            reduction_den = 4
            self.resize_identity = True
        else:
            reduction_den = 2
            self.resize_identity = False

        self.conv1 = SqnxtConv(in_channels, in_channels // reduction_den, kernel_size=1, stride=stride)
        self.conv2 = SqnxtConv(in_channels // reduction_den, in_channels // (2 * reduction_den), kernel_size=1,
                               stride=1)
        self.conv3 = SqnxtConv(in_channels // (2 * reduction_den), in_channels // reduction_den, kernel_size=(1, 3),
                               stride=1, padding=(0, 1))
        self.conv4 = SqnxtConv(in_channels // reduction_den, in_channels // reduction_den, kernel_size=(3, 1),
                               stride=1, padding=(1, 0))
        self.conv5 = SqnxtConv(in_channels // reduction_den, out_channels, kernel_size=1, stride=1)

        if self.resize_identity:
            self.identity_conv = SqnxtConv(in_channels, out_channels, kernel_size=1, stride=stride)
        self.activ = nn.ReLU(inplace=True)

    def forward(self, x):
        if self.resize_identity:
            identity = self.identity_conv(x)
        else:
            identity = x
        identity = self.activ(identity)
        x = self.conv1(x)
        x = self.conv2(x)
        x = self.conv3(x)
        x = self.conv4(x)
        x = self.conv5(x)
        x = x + identity
        x = self.activ(x)
        return x


class SqnxtInitBlock(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(SqnxtInitBlock, self).__init__()
        self.conv = SqnxtConv(in_channels, out_channels, kernel_size=7, stride=2, padding=1)
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True)

    def forward(self, x):
        x = self.conv(x)
        x = self.pool(x)
        return x


class SqueezeNext(nn.Module):
    def __init__(self, channels, init_block_channels, final_block_channels, in_channels=3, num_classes=10):
        super(SqueezeNext, self).__init__()
        self.features = nn.Sequential()
        self.features.add_module("init_block", SqnxtInitBlock(in_channels, init_block_channels))
        in_channels = init_block_channels
        for i, channels_per_stage in enumerate(channels):
            stage = nn.Sequential()
            for j, out_channels in enumerate(channels_per_stage):
                stride = 2 if (j == 0) and (i != 0) else 1
                stage.add_module("unit{}".format(j + 1), SqnxtUnit(in_channels, out_channels, stride))
                in_channels = out_channels
            self.features.add_module("stage{}".format(i + 1), stage)
        self.features.add_module('final_block', SqnxtConv(in_channels, final_block_channels, kernel_size=1, stride=1))
        self.features.add_module('final_pool', nn.AdaptiveAvgPool2d(1))
        self.output = nn.Linear(final_block_channels, num_classes)

    def forward(self, x):
        x = self.features(x)
        x = x.view(x.size(0), -1)
        x = self.output(x)
        return x


def sqnxt23v5_w2(**kwargs):
    init_block_channels = 16
    final_block_channels = 32
    channels = [[16, 16], [32, 32]]
    return SqueezeNext(channels, init_block_channels, final_block_channels, **kwargs)


model = sqnxt23v5_w2()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
criterion = nn.CrossEntropyLoss()
model.train()
for i in range(2):
    images = torch.randn(4, 3, 32, 32)
    target = torch.randint(0, 10, (4,))
    output = model(images)
    loss = criterion(output, target)
    optimizer.zero_grad()
    loss.backward()  # expect: GG103
    optimizer.step()
