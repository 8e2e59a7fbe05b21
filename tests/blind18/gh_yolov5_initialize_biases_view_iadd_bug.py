# Source: https://github.com/ultralytics/yolov5/commit/9922c1183ffa09f7c90cfe9cbabc058d4d2ec3d8
"""ultralytics/yolov5, models/yolo.py before "leaf Variable inplace bug fix (#1759)": `Model.__init__`
builds the network, runs a forward to get the strides, then `_initialize_biases()` writes the
objectness/class priors into each Detect conv's bias through `b = mi.bias.view(m.na, -1)`,
`b[:, 4] += ...`. The bias is a leaf Parameter that requires grad, so torch raises "a view of a leaf
Variable that requires grad is being used in an in-place operation". Fix (the commit's): write
through `b.data[:, 4] += ...`. The yaml config, parse_model and the common blocks are small stand-ins
(a two-level backbone, 2 classes); CPU, tiny sizes.
"""
import math
from copy import deepcopy

import torch
import torch.nn as nn


# ---- stand-ins: models.common.Conv, models.yolo.parse_model, utils.autoanchor.check_anchor_order ----
class Conv(nn.Module):
    def __init__(self, c1, c2, k=1, s=1):
        super(Conv, self).__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


def check_anchor_order(m):
    a = m.anchor_grid.prod(-1).view(-1)
    da = a[-1] - a[0]
    ds = m.stride[-1] - m.stride[0]
    if da.sign() != ds.sign():
        m.anchors[:] = m.anchors.flip(0)
        m.anchor_grid[:] = m.anchor_grid.flip(0)


def initialize_weights(model):
    for m in model.modules():
        if type(m) is nn.BatchNorm2d:
            m.eps = 1e-3
            m.momentum = 0.03


class Detect(nn.Module):
    stride = None  # strides computed during build
    export = False  # onnx export

    def __init__(self, nc=80, anchors=(), ch=()):  # detection layer
        super(Detect, self).__init__()
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor
        self.nl = len(anchors)  # number of detection layers
        self.na = len(anchors[0]) // 2  # number of anchors
        self.grid = [torch.zeros(1)] * self.nl  # init grid
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)  # shape(nl,na,2)
        self.register_buffer('anchor_grid', a.clone().view(self.nl, 1, -1, 1, 1, 2))  # shape(nl,1,na,1,1,2)
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv

    def forward(self, x):
        z = []  # inference output
        self.training |= self.export
        for i in range(self.nl):
            x[i] = self.m[i](x[i])  # conv
            bs, _, ny, nx = x[i].shape  # x(bs,255,20,20) to x(bs,3,20,20,85)
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        return x


def parse_model(d, ch):
    layers, save = [], []
    for i, (f, n, m, args) in enumerate(d['backbone'] + d['head']):
        if m is Detect:
            args = [d['nc'], d['anchors'], [ch[x + 1] for x in f]]
            c2 = ch[-1]
        else:
            c1, c2 = ch[f if f == -1 else f + 1], args[0]
            args = [c1, *args]
        m_ = m(*args)
        m_.i, m_.f, m_.type, m_.np = i, f, m.__name__, sum(x.numel() for x in m_.parameters())
        save.extend(x % i for x in ([f] if isinstance(f, int) else f) if x != -1)
        layers.append(m_)
        ch.append(c2)
    return nn.Sequential(*layers), sorted(save)


YOLO_CFG = {
    'nc': 2,
    'anchors': [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119]],
    'backbone': [[-1, 1, Conv, [8, 3, 2]], [-1, 1, Conv, [16, 3, 2]], [-1, 1, Conv, [16, 3, 2]],
                 [-1, 1, Conv, [32, 3, 2]]],
    'head': [[[2, 3], 1, Detect, []]],
}


# ---- models/yolo.py ----
class Model(nn.Module):
    def __init__(self, cfg=YOLO_CFG, ch=3, nc=None):  # model, input channels, number of classes
        super(Model, self).__init__()
        self.yaml = cfg  # model dict

        # Define model
        ch = self.yaml['ch'] = self.yaml.get('ch', ch)  # input channels
        if nc and nc != self.yaml['nc']:
            self.yaml['nc'] = nc  # override yaml value
        self.model, self.save = parse_model(deepcopy(self.yaml), ch=[ch])  # model, savelist
        self.names = [str(i) for i in range(self.yaml['nc'])]  # default names

        # Build strides, anchors
        m = self.model[-1]  # Detect()
        if isinstance(m, Detect):
            s = 128  # 2x min stride
            m.stride = torch.tensor([s / x.shape[-2] for x in self.forward(torch.zeros(1, ch, s, s))])  # forward
            m.anchors /= m.stride.view(-1, 1, 1)
            check_anchor_order(m)
            self.stride = m.stride
            self._initialize_biases()  # only run once

        # Init weights, biases
        initialize_weights(self)

    def forward(self, x, augment=False, profile=False):
        return self.forward_once(x, profile)  # single-scale inference, train

    def forward_once(self, x, profile=False):
        y, dt = [], []  # outputs
        for m in self.model:
            if m.f != -1:  # if not from previous layer
                x = y[m.f] if isinstance(m.f, int) else [x if j == -1 else y[j] for j in m.f]  # from earlier layers
            x = m(x)  # run
            y.append(x if m.i in self.save else None)  # save output
        return x

    def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
        # https://arxiv.org/abs/1708.02002 section 3.3
        m = self.model[-1]  # Detect() module
        for mi, s in zip(m.m, m.stride):  # from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # obj (8 objects per 640 image)  # expect: GG108
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


if __name__ == '__main__':
    torch.manual_seed(0)
    model = Model(YOLO_CFG)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937)
    imgs = torch.rand(2, 3, 64, 64)
    pred = model(imgs)
    loss = sum(p[..., 4].sigmoid().mean() for p in pred)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(float(loss))
