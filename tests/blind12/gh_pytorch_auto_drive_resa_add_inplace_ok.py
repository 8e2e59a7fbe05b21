# Source: https://github.com/voldemortX/pytorch-auto-drive/issues/121
"""pytorch-auto-drive's RESA with the maintainer's fix: the feature-shift aggregation adds out of
place (`y = y + self.alpha * F.relu(...)`), so the reducer's ReLU output that ReluBackward0 saved is
never modified. Backbone, reducer, decoder, existence head and data are small stand-ins.
"""
import math

import torch
from torch import nn as nn
from torch.nn import functional as F


def is_tracing():
    return torch.jit.is_scripting() or torch.jit.is_tracing()


class RESAReducer(nn.Module):
    # Reduce channel (typically to 128), RESA code use no BN nor ReLU
    def __init__(self, in_channels=512, reduce=128, bn_relu=True):
        super(RESAReducer, self).__init__()
        self.bn_relu = bn_relu
        self.conv1 = nn.Conv2d(in_channels, reduce, 1, bias=False)
        if self.bn_relu:
            self.bn1 = nn.BatchNorm2d(reduce)

    def forward(self, x):
        x = self.conv1(x)
        if self.bn_relu:
            x = self.bn1(x)
            x = F.relu(x)
        return x


class RESA(nn.Module):
    # REcurrent Feature-Shift Aggregator in RESA paper
    def __init__(self, num_channels=128, iteration=5, alpha=2.0, trace_arg=None, os=8):
        super(RESA, self).__init__()
        self.iteration = iteration
        self.alpha = alpha
        self.conv_d = nn.ModuleList(nn.Conv2d(num_channels, num_channels, (1, 9), padding=(0, 4), bias=False)
                                    for _ in range(iteration))
        self.conv_u = nn.ModuleList(nn.Conv2d(num_channels, num_channels, (1, 9), padding=(0, 4), bias=False)
                                    for _ in range(iteration))
        self.conv_r = nn.ModuleList(nn.Conv2d(num_channels, num_channels, (9, 1), padding=(4, 0), bias=False)
                                    for _ in range(iteration))
        self.conv_l = nn.ModuleList(nn.Conv2d(num_channels, num_channels, (9, 1), padding=(4, 0), bias=False)
                                    for _ in range(iteration))
        self._adjust_initializations(num_channels=num_channels)

    def _adjust_initializations(self, num_channels=128):
        bound = math.sqrt(2.0 / (num_channels * 9 * 5))
        for i in self.conv_d:
            nn.init.uniform_(i.weight, -bound, bound)
        for i in self.conv_u:
            nn.init.uniform_(i.weight, -bound, bound)
        for i in self.conv_r:
            nn.init.uniform_(i.weight, -bound, bound)
        for i in self.conv_l:
            nn.init.uniform_(i.weight, -bound, bound)

    def forward(self, x):
        y = x
        h, w = y.shape[-2:]
        if 2 ** self.iteration > min(h, w):
            print('Too many iterations for RESA, your image size may be too small.')
        # Down
        for i in range(self.iteration):
            idx = (torch.arange(h) + h // 2 ** (self.iteration - i)) % h
            y = y + (self.alpha * F.relu(self.conv_d[i](y[:, :, idx, :])))
        # Up
        for i in range(self.iteration):
            idx = (torch.arange(h) - h // 2 ** (self.iteration - i)) % h
            y = y + (self.alpha * F.relu(self.conv_u[i](y[:, :, idx, :])))
        # Right
        for i in range(self.iteration):
            idx = (torch.arange(w) + w // 2 ** (self.iteration - i)) % w
            y = y + (self.alpha * F.relu(self.conv_r[i](y[:, :, :, idx])))
        # Left
        for i in range(self.iteration):
            idx = (torch.arange(w) - w // 2 ** (self.iteration - i)) % w
            y = y + (self.alpha * F.relu(self.conv_l[i](y[:, :, :, idx])))
        return y


class BUSD(nn.Module):
    """Stand-in for the bilateral up-sampling decoder: two upsampling convs to class scores."""
    def __init__(self, in_channels=128, num_classes=5):
        super().__init__()
        self.up1 = nn.Conv2d(in_channels, 32, 3, padding=1)
        self.out = nn.Conv2d(32, num_classes, 1)

    def forward(self, x):
        x = F.interpolate(F.relu(self.up1(x)), scale_factor=2, mode='bilinear', align_corners=False)
        return F.interpolate(self.out(x), scale_factor=4, mode='bilinear', align_corners=False)


class RESALaneExist(nn.Module):
    def __init__(self, num_output=4, flattened_size=32, dropout=0.1, in_channels=128):
        super().__init__()
        self.dropout1 = nn.Dropout2d(dropout)
        self.conv1 = nn.Conv2d(in_channels, 5, 1)
        self.pool = nn.AdaptiveAvgPool2d((2, 4))
        self.linear1 = nn.Linear(5 * 8, flattened_size)
        self.linear2 = nn.Linear(flattened_size, num_output)

    def forward(self, x):
        x = self.conv1(self.dropout1(x))
        x = F.softmax(x, dim=1)
        x = self.pool(x).flatten(start_dim=1)
        return self.linear2(F.relu(self.linear1(x)))


class StandardLaneDetectionModel(nn.Module):
    def __init__(self):
        super().__init__()
        # ResNet-18 stand-in: stride-8 feature map with 64 channels
        self.backbone = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.Conv2d(64, 64, 3, stride=2, padding=1), nn.ReLU())
        self.reducer = RESAReducer(in_channels=64, reduce=32)
        self.spatial_conv = RESA(num_channels=32, iteration=3)
        self.classifier = BUSD(in_channels=32)
        self.lane_classifier = RESALaneExist(in_channels=32)

    def forward(self, x):
        x = self.reducer(self.backbone(x))
        x = self.spatial_conv(x)
        return {'out': self.classifier(x), 'lane': self.lane_classifier(x)}


def lane_loss(outputs, labels, lane_existence, existence_weight=0.1):
    seg = F.cross_entropy(outputs['out'], labels, weight=torch.tensor([0.4, 1, 1, 1, 1]))
    exist = F.binary_cross_entropy_with_logits(outputs['lane'], lane_existence)
    return seg + existence_weight * exist


net = StandardLaneDetectionModel()
optimizer = torch.optim.SGD(net.parameters(), lr=0.06, momentum=0.9, weight_decay=1e-4)
for step in range(2):
    images = torch.randn(2, 3, 64, 96)
    labels = torch.randint(0, 5, (2, 64, 96))
    lane_existence = torch.randint(0, 2, (2, 4)).float()
    outputs = net(images)
    loss = lane_loss(outputs, labels, lane_existence)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
