# Source: https://github.com/WongKinYiu/yolov7/issues/1527
"""https://github.com/WongKinYiu/yolov7/issues/1527
Generating an adversarial example against a YOLOv7 (deploy) model, fixed as the thread did in
models/yolo.py (line 54): in eval mode `Detect.forward` decoded the boxes by writing into the
sigmoid output in place (`y[..., 0:2] = ...`, `y[..., 2:4] = ...`), which the sigmoid had saved, so
the attack loss's backward failed ("modified by an inplace operation ... output 0 of
SigmoidBackward0"). The decode now builds new tensors, `xy` and `wh` from slices of `y`, and
concatenates them with the confidences. The issue shows no attack code: the attack loop here
(maximise the best objectness, signed-gradient steps) is a stand-in, as are the small backbone and
the image (64x64 random, 3 classes, two detection levels, CPU)."""
import torch
import torch.nn as nn


def autopad(k, p=None):
    return k // 2 if p is None else p


class Conv(nn.Module):
    def __init__(self, c1, c2, k=1, s=1, p=None, g=1, act=True):
        super(Conv, self).__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, autopad(k, p), groups=g, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU() if act is True else (act if isinstance(act, nn.Module) else nn.Identity())

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Detect(nn.Module):
    stride = None  # strides computed during build
    export = False  # onnx export
    end2end = False
    include_nms = False
    concat = False

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

            if not self.training:  # inference
                if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i] = self._make_grid(nx, ny).to(x[i].device)
                y = x[i].sigmoid()
                if not torch.onnx.is_in_onnx_export():
                    xy = (y[..., 0:2] * 2. - 0.5 + self.grid[i]) * self.stride[i]  # xy
                    wh = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]  # wh
                    y = torch.cat((xy, wh, y[..., 4:]), -1)
                else:
                    xy, wh, conf = y.split((2, 2, self.nc + 1), 4)
                    xy = xy * (2. * self.stride[i]) + (self.stride[i] * (self.grid[i] - 0.5))  # new xy
                    wh = wh ** 2 * (4 * self.anchor_grid[i].data)  # new wh
                    y = torch.cat((xy, wh, conf), 4)
                z.append(y.view(bs, -1, self.no))

        if self.training:
            out = x
        elif self.end2end:
            out = torch.cat(z, 1)
        elif self.concat:
            out = torch.cat(z, 1)
        else:
            out = (torch.cat(z, 1), x)
        return out

    @staticmethod
    def _make_grid(nx=20, ny=20):
        yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing="ij")
        return torch.stack((xv, yv), 2).view((1, 1, ny, nx, 2)).float()


class Model(nn.Module):
    """Stand-in for models/yolo.py's Model built from cfg/deploy/yolov7.yaml: a small backbone
    whose stride-8 and stride-16 maps feed Detect."""

    def __init__(self, nc=3, anchors=((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119))):
        super(Model, self).__init__()
        self.b1 = nn.Sequential(Conv(3, 8, 3, 2), Conv(8, 16, 3, 2), Conv(16, 16, 3, 2))  # P3/8
        self.b2 = Conv(16, 32, 3, 2)  # P4/16
        self.detect = Detect(nc, anchors, ch=(16, 32))
        self.detect.stride = torch.tensor([8., 16.])
        self.detect.anchors /= self.detect.stride.view(-1, 1, 1)
        self.stride = self.detect.stride

    def forward(self, x, augment=False, profile=False):
        p3 = self.b1(x)
        p4 = self.b2(p3)
        return self.detect([p3, p4])


def attempt_load(weights, map_location=None):
    """Stand-in for models/experimental.attempt_load: a freshly initialised model in eval mode."""
    torch.manual_seed(0)
    return Model().float().eval()


device = torch.device("cpu")
model = attempt_load("yolov7.pt", map_location=device)
for p in model.parameters():
    p.requires_grad_(False)

img = torch.rand(1, 3, 64, 64, device=device)  # letterboxed image / 255
adv = img.clone().detach().requires_grad_(True)
eps, alpha, steps = 8 / 255, 2 / 255, 3
for _ in range(steps):
    pred = model(adv)[0]  # (1, anchors, 5 + nc), boxes decoded in Detect
    loss = pred[..., 4].max()  # attack the most confident detection
    loss.backward()
    with torch.no_grad():
        adv -= alpha * adv.grad.sign()
        adv.copy_(torch.min(torch.max(adv, img - eps), img + eps).clamp(0, 1))
    adv.grad = None
print((adv - img).abs().max().item())
