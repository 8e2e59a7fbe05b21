# Source: https://github.com/osmr/imgclsmob/issues/13
"""Xception-style blocks from imgclsmob (self.activ = nn.ReLU(inplace=False) ... x = self.activ(x)):
a block computes its identity branch with a strided 1x1 conv of x, then the main branch starts
with a ReLU that is not in place (the reporter's fix: remove inplace=True), so the input the
identity conv saved is left as it was."""
import torch
import torch.nn as nn


class DwsConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.dw_conv = nn.Conv2d(in_channels, in_channels, 3, padding=1, groups=in_channels, bias=False)
        self.pw_conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)

    def forward(self, x):
        return self.pw_conv(self.dw_conv(x))


class XceptionUnit(nn.Module):
    def __init__(self, in_channels, out_channels, stride):
        super().__init__()
        self.identity_conv = nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False)
        self.identity_bn = nn.BatchNorm2d(out_channels)
        self.activ = nn.ReLU(inplace=False)
        self.conv1 = DwsConv(in_channels, out_channels)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.pool = nn.MaxPool2d(3, stride=stride, padding=1)

    def forward(self, x):
        identity = self.identity_bn(self.identity_conv(x))
        x = self.activ(x)
        x = self.bn1(self.conv1(x))
        x = self.pool(x)
        return x + identity


class Xception(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.init_block = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8))
        self.stage = nn.Sequential(XceptionUnit(8, 16, 2), XceptionUnit(16, 16, 1))
        self.output = nn.Linear(16, num_classes)

    def forward(self, x):
        x = self.stage(self.init_block(x))
        return self.output(x.mean(dim=(2, 3)))


def train(train_loader, model, criterion, optimizer):
    model.train()
    for images, target in train_loader:
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


model = Xception()
loader = [(torch.randn(2, 3, 8, 8), torch.tensor([0, 3])) for _ in range(2)]
train(loader, model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
