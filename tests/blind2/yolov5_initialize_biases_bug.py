# Source: https://github.com/DataXujing/YOLO-v5/issues/23
"""YOLOv5's models/yolo.py as the reporter ran it (PyTorch 1.8, RTX 3090): Model.__init__ calls
_initialize_biases(), which views each Detect conv bias as (anchors, outputs) and writes the
objectness column, b[:, 4] = b[:, 4] + log(...): an in-place write into a view of a parameter
that requires grad, with grad enabled, so building the model fails. A two-conv backbone and a
two-level Detect head with 2 classes replace the yolov5s.yaml network."""
import math

import torch
import torch.nn as nn


class Detect(nn.Module):
    def __init__(self, nc=80, anchors=(), ch=()):  # detection layer
        super(Detect, self).__init__()
        self.stride = None  # strides computed during build
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor
        self.nl = len(anchors)  # number of detection layers
        self.na = len(anchors[0]) // 2  # number of anchors
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv

    def forward(self, x):
        for i in range(self.nl):
            x[i] = self.m[i](x[i])  # conv
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        return x


class Model(nn.Module):
    def __init__(self, nc=2, anchors=((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119))):
        super(Model, self).__init__()
        self.backbone = nn.ModuleList([nn.Conv2d(3, 8, 3, 2, 1), nn.Conv2d(8, 16, 3, 2, 1)])
        self.model = nn.Sequential(Detect(nc, anchors, ch=(8, 16)))

        # Build strides, anchors
        m = self.model[-1]  # Detect()
        s = 32  # 2x min stride
        m.stride = torch.tensor([s / x.shape[-2] for x in self.forward(torch.zeros(1, 3, s, s))])  # forward
        self.stride = m.stride
        self._initialize_biases()  # only run once

    def forward(self, x):
        feats = []
        for conv in self.backbone:
            x = conv(x)
            feats.append(x)
        return self.model[-1](feats)

    def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
        # https://arxiv.org/abs/1708.02002 section 3.3
        m = self.model[-1]  # Detect() module
        for mi, s in zip(m.m, m.stride):  #  from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b[:,4] = b[:,4]+math.log(8 / (640 / s) ** 2)  # expect: GG108
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


model = Model()
print([p.shape for p in model(torch.zeros(1, 3, 32, 32))])
