# Source: https://github.com/xhwNobody/yolov5_prune_sfp/issues/17
"""yolov5_prune_sfp's weights/model.py, built by copy_weight.py (`model_dst = Model(nc=80)`): the
model's __init__ calls _initialize_biases(), which takes each Detect conv's bias as
`b = mi.bias.view(m.na, -1)` and adds the objectness and class priors with `b[:, 4] += ...`. The
repository dropped the `.data` of YOLOv5's original, so the in-place add goes through a view of
the bias Parameter: "a view of a leaf Variable that requires grad is being used in an in-place
operation", raised while the model is built. The backbone is a small stand-in for the pruned
YOLOv5s layers feeding the three Detect levels; copy_weight.py's copying is reduced to a
state-dict load."""
import math

import torch
import torch.nn as nn


class Detect(nn.Module):
    stride = None  # strides computed during build

    def __init__(self, nc=80, anchors=(), ch=()):  # detection layer
        super(Detect, self).__init__()
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor
        self.nl = len(anchors)  # number of detection layers
        self.na = len(anchors[0]) // 2  # number of anchors
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv

    def forward(self, x):
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        return x


class Model(nn.Module):
    def __init__(self, nc=80):
        super(Model, self).__init__()
        self.backbone = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.SiLU(), nn.Conv2d(8, 16, 3, 2, 1), nn.SiLU(),
                          nn.Conv2d(16, 16, 3, 2, 1), nn.SiLU()),  # P3/8
            nn.Sequential(nn.Conv2d(16, 32, 3, 2, 1), nn.SiLU()),  # P4/16
            nn.Sequential(nn.Conv2d(32, 64, 3, 2, 1), nn.SiLU()),  # P5/32
        ])
        anchors = [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326]]
        self.head_self = Detect(nc, anchors, ch=(16, 32, 64))
        self.head_self.stride = torch.tensor([8., 16., 32.])
        self._initialize_biases()  # only run once

    def forward(self, x):
        feats = []
        for layer in self.backbone:
            x = layer(x)
            feats.append(x)
        return self.head_self(feats)

    def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
        m = self.head_self  # Detect() module
        for mi, s in zip(m.m, m.stride):  # from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # expect: GG108
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


model_src = Model(nc=80)
model_dst = Model(nc=80)
model_dst.load_state_dict(model_src.state_dict())
print([o.shape for o in model_dst(torch.randn(1, 3, 64, 64))])
