# Source: https://github.com/hustvl/YOLOP/pull/17
"""YOLOP (hustvl, lib/models/YOLOP.py) in the NVIDIA PyTorch 21.06 container: MCnet's constructor
calls _initialize_biases(), which writes the objectness and class priors through
`b = mi.bias.view(m.na, -1)`, a view of the detection convs' bias parameters, with `+=`. On a
torch that checks it this fails while the model is built ("a view of a leaf Variable that
requires grad is being used in an in-place operation"); the PR applies the fix of YOLOv5 issue
1552 (write through `b.data`). _initialize_biases and the Detect head are the repository's; a
small conv backbone, one drivable-area segmentation head, the stride probe and a few random
training steps stand in for the full multi-task network and BDD100K."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Detect(nn.Module):
    def __init__(self, nc=1, anchors=(), ch=()):
        super(Detect, self).__init__()
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor
        self.nl = len(anchors)  # number of detection layers
        self.na = len(anchors[0]) // 2  # number of anchors
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv
        self.stride = None

    def forward(self, x):
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            z.append(x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous())
        return z


class MCnet(nn.Module):
    def __init__(self, nc=1, ch=3):
        super(MCnet, self).__init__()
        self.nc = nc
        self.backbone = nn.ModuleList([
            nn.Sequential(nn.Conv2d(ch, 8, 3, 2, 1), nn.SiLU()),
            nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.SiLU()),
        ])
        self.model = nn.ModuleList([Detect(nc, ((3, 4, 5, 8, 10, 12), (12, 16, 19, 36, 40, 28)), (8, 16))])
        self.detector_index = 0
        self.drive_area_seg = nn.Conv2d(8, 2, 1)

        # Build strides, anchors
        m = self.model[self.detector_index]
        s = 64
        with torch.no_grad():
            detects, _ = self.forward(torch.zeros(1, ch, s, s))
        m.stride = torch.tensor([s / x.shape[-2] for x in detects])
        m.anchors /= m.stride.view(-1, 1, 1)
        self.stride = m.stride
        self._initialize_biases()

    def forward(self, x):
        feats = []
        for block in self.backbone:
            x = block(x)
            feats.append(x)
        det_out = self.model[self.detector_index](list(feats))
        da_seg_out = torch.sigmoid(F.interpolate(self.drive_area_seg(feats[0]), scale_factor=2))
        return det_out, da_seg_out

    def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
        # https://arxiv.org/abs/1708.02002 section 3.3
        m = self.model[self.detector_index]  # Detect() module
        for mi, s in zip(m.m, m.stride):  # from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # expect: GG108
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


model = MCnet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937)
for i in range(2):
    img = torch.randn(2, 3, 32, 32)
    da_target = torch.randint(0, 2, (2, 2, 32, 32)).float()
    det_out, da_seg_out = model(img)
    obj_loss = sum(F.binary_cross_entropy_with_logits(p[..., 4], torch.zeros_like(p[..., 4])) for p in det_out)
    loss = obj_loss + F.binary_cross_entropy(da_seg_out, da_target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(i, loss.item())
