# Source: https://github.com/ultralytics/yolov5/issues/1552
"""YOLOv5 train.py: `model = Model(opt.cfg, ch=3, nc=nc).to(device)` builds the detector
from its yaml config; `Model.__init__` ends with `self._initialize_biases()`, the "smart
bias initialization" of the Detect head, and then training starts.

`_initialize_biases` takes `b = mi.bias.view(m.na, -1)` -- a view of the Detect conv's
bias, a leaf that requires grad -- and adds the objectness / class priors in place,
`b[:, 4] += math.log(8 / (640 / s) ** 2)`. Outside `torch.no_grad()` torch refuses:
"a view of a leaf Variable that requires grad is being used in an in-place operation"
(the issue: with torch 1.8 builds, in Docker and on RTX 3090 machines).

The fix (ultralytics PR #1759 "leaf Variable inplace bug fix", in the _ok twin): modify
the data, `b.data[:, 4] += ...` / `b.data[:, 5:] += ...`. The yaml parser, backbone and
loss are reduced to small stand-ins with YOLOv5's structure (Model / Detect / train).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv(nn.Module):
    def __init__(self, c1, c2, k=1, s=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Detect(nn.Module):
    stride = None

    def __init__(self, nc=80, anchors=(), ch=()):
        super(Detect, self).__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        return x


class Model(nn.Module):
    def __init__(self, cfg=None, ch=3, nc=None):
        super(Model, self).__init__()
        self.yaml = cfg or {'nc': 4, 'anchors': [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119]]}
        if nc and nc != self.yaml['nc']:
            self.yaml['nc'] = nc
        self.backbone = nn.ModuleList([Conv(ch, 8, 3, 2), Conv(8, 16, 3, 2), Conv(16, 16, 3, 2)])
        self.detect = Detect(self.yaml['nc'], self.yaml['anchors'], ch=(16, 16))

        # Build strides, anchors
        m = self.detect
        s = 64  # 2x min stride
        m.stride = torch.tensor([s / x.shape[-2] for x in self.forward(torch.zeros(1, ch, s, s))])
        self.stride = m.stride
        self._initialize_biases()  # only run once

    def forward(self, x):
        x = self.backbone[0](x)
        p4 = self.backbone[1](x)
        p5 = self.backbone[2](p4)
        return self.detect([p4, p5])

    def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
        m = self.detect  # Detect() module
        for mi, s in zip(m.m, m.stride):  # from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            # obj (8 objects per 640 image)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # expect: GG108
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


def compute_loss(p, targets):
    # stand-in for utils.loss.ComputeLoss: objectness + class BCE against random targets
    lobj = sum(F.binary_cross_entropy_with_logits(pi[..., 4], t) for pi, t in zip(p, targets))
    return lobj


def train(hyp, nc=4, epochs=2):
    device = torch.device('cpu')
    model = Model(None, ch=3, nc=nc).to(device)  # create
    optimizer = torch.optim.SGD(model.parameters(), lr=hyp['lr0'], momentum=hyp['momentum'], nesterov=True)
    for epoch in range(epochs):
        model.train()
        for i in range(2):
            imgs = torch.rand(2, 3, 64, 64)
            pred = model(imgs)
            targets = [torch.randint(0, 2, pi.shape[:-1]).float() for pi in pred]
            loss = compute_loss(pred, targets)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        print(f'epoch {epoch} loss {loss.item():.4f}')


if __name__ == '__main__':
    torch.manual_seed(0)
    train({'lr0': 0.01, 'momentum': 0.937})
