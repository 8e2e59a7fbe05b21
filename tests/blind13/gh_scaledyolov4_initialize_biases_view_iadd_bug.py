# Source: https://github.com/WongKinYiu/ScaledYOLOv4/issues/191
"""ScaledYOLOv4 (yolov4-p5 branch): building the Model runs `_initialize_biases()`, which takes
`b = mi.bias.view(m.na, -1)` of each Detect output conv and adds the objectness / class priors
with `b[:, 4] += ...` and `b[:, 5:] += ...`: an in-place write into a view of the conv's bias, a
leaf Parameter that requires grad. Since torch 1.8 this raises "a view of a leaf Variable that
requires grad is being used in an in-place operation" (the report: train.py fails at model
creation on Colab). The yaml config, Conv/BottleneckCSP blocks and the training set-up are small
stand-ins written here; the Detect head and _initialize_biases are the repository's.
"""
import math
from copy import deepcopy

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_divisible(x, divisor):
    return math.ceil(x / divisor) * divisor


def autopad(k, p=None):
    if p is None:
        p = k // 2 if isinstance(k, int) else [x // 2 for x in k]
    return p


class Mish(nn.Module):
    @staticmethod
    def forward(x):
        return x * F.softplus(x).tanh()


class Conv(nn.Module):
    def __init__(self, c1, c2, k=1, s=1, p=None, g=1, act=True):
        super(Conv, self).__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, autopad(k, p), groups=g, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = Mish() if act else nn.Identity()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Concat(nn.Module):
    def __init__(self, dimension=1):
        super(Concat, self).__init__()
        self.d = dimension

    def forward(self, x):
        return torch.cat(x, self.d)


class Detect(nn.Module):
    def __init__(self, nc=80, anchors=(), ch=()):  # detection layer
        super(Detect, self).__init__()
        self.stride = None
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.grid = [torch.zeros(1)] * self.nl
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)
        self.register_buffer('anchor_grid', a.clone().view(self.nl, 1, -1, 1, 1, 2))
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)
        self.export = False

    def forward(self, x):
        z = []
        self.training |= self.export
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if not self.training:
                if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i] = self._make_grid(nx, ny).to(x[i].device)
                y = x[i].sigmoid()
                y[..., 0:2] = (y[..., 0:2] * 2. - 0.5 + self.grid[i].to(x[i].device)) * self.stride[i]
                y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]
                z.append(y.view(bs, -1, self.no))
        return x if self.training else (torch.cat(z, 1), x)

    @staticmethod
    def _make_grid(nx=20, ny=20):
        yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing='ij')
        return torch.stack((xv, yv), 2).view((1, 1, ny, nx, 2)).float()


def check_anchor_order(m):
    a = m.anchor_grid.prod(-1).view(-1)
    da = a[-1] - a[0]
    ds = m.stride[-1] - m.stride[0]
    if da.sign() != ds.sign():
        m.anchors[:] = m.anchors.flip(0)
        m.anchor_grid[:] = m.anchor_grid.flip(0)


def initialize_weights(model):
    for m in model.modules():
        t = type(m)
        if t is nn.BatchNorm2d:
            m.eps = 1e-3
            m.momentum = 0.03
        elif t in [nn.LeakyReLU, nn.ReLU, nn.ReLU6]:
            m.inplace = True


class Model(nn.Module):
    def __init__(self, cfg, ch=3, nc=None):
        super(Model, self).__init__()
        self.yaml = cfg
        if nc and nc != self.yaml['nc']:
            print('Overriding nc=%g with nc=%g' % (self.yaml['nc'], nc))
            self.yaml['nc'] = nc
        self.model, self.save = parse_model(deepcopy(self.yaml), ch=[ch])

        m = self.model[-1]  # Detect()
        if isinstance(m, Detect):
            s = 64  # 2x min stride
            m.stride = torch.tensor([s / x.shape[-2] for x in self.forward(torch.zeros(1, ch, s, s))])
            m.anchors /= m.stride.view(-1, 1, 1)
            check_anchor_order(m)
            self.stride = m.stride
            self._initialize_biases()  # only run once

        initialize_weights(self)

    def forward(self, x, augment=False, profile=False):
        return self.forward_once(x, profile)

    def forward_once(self, x, profile=False):
        y = []
        for m in self.model:
            if m.f != -1:
                x = y[m.f] if isinstance(m.f, int) else [x if j == -1 else y[j] for j in m.f]
            x = m(x)
            y.append(x if m.i in self.save else None)
        return x

    def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
        m = self.model[-1]  # Detect() module
        for mi, s in zip(m.m, m.stride):  # from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # expect: GG108
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


def parse_model(d, ch):
    anchors, nc, gd, gw = d['anchors'], d['nc'], d['depth_multiple'], d['width_multiple']
    na = (len(anchors[0]) // 2) if isinstance(anchors, list) else anchors
    no = na * (nc + 5)
    layers, save, c2 = [], [], ch[-1]
    for i, (f, n, m, args) in enumerate(d['backbone'] + d['head']):
        m = eval(m) if isinstance(m, str) else m
        for j, a in enumerate(args):
            try:
                args[j] = eval(a) if isinstance(a, str) else a
            except Exception:
                pass
        n = max(round(n * gd), 1) if n > 1 else n
        if m in [nn.Conv2d, Conv]:
            c1, c2 = ch[f], args[0]
            c2 = make_divisible(c2 * gw, 8) if c2 != no else c2
            args = [c1, c2, *args[1:]]
        elif m is Concat:
            c2 = sum([ch[-1 if x == -1 else x + 1] for x in f])
        elif m is Detect:
            args.append([ch[x + 1] for x in f])
        else:
            c2 = ch[f]
        m_ = nn.Sequential(*[m(*args) for _ in range(n)]) if n > 1 else m(*args)
        m_.i, m_.f = i, f
        save.extend(x % i for x in ([f] if isinstance(f, int) else f) if x != -1)
        layers.append(m_)
        ch.append(c2)
    return nn.Sequential(*layers), sorted(save)


# a tiny yolov4-p5-like config (the repository reads it from models/yolov4-p5.yaml)
cfg = {
    'nc': 80, 'depth_multiple': 1.0, 'width_multiple': 1.0,
    'anchors': [[13, 17, 31, 25, 24, 51], [61, 45, 48, 102, 119, 96]],
    'backbone': [[-1, 1, 'Conv', [8, 3, 1]],
                 [-1, 1, 'Conv', [16, 3, 2]],
                 [-1, 1, 'Conv', [16, 3, 2]],
                 [-1, 1, 'Conv', [32, 3, 2]],
                 [-1, 1, 'Conv', [32, 3, 2]]],
    'head': [[-1, 1, 'Conv', [16, 1, 1]],
             [-1, 1, 'nn.Upsample', [None, 2, 'nearest']],
             [[-1, 3], 1, 'Concat', [1]],
             [-1, 1, 'Conv', [16, 3, 1]],
             [[8, 4], 1, 'Detect', ['nc', 'anchors']]],
}


def train(hyp, nc=3, epochs=1):
    model = Model(cfg, ch=3, nc=nc)
    optimizer = torch.optim.SGD(model.parameters(), lr=hyp['lr0'], momentum=hyp['momentum'], nesterov=True)
    model.train()
    for epoch in range(epochs):
        imgs = torch.rand(2, 3, 64, 64)
        pred = model(imgs)
        loss = sum(p[..., 4].sigmoid().mean() for p in pred)  # stand-in for compute_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model


model = train({'lr0': 0.01, 'momentum': 0.937})
