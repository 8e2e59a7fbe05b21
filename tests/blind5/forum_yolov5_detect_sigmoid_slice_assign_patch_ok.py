# Source: https://github.com/ultralytics/yolov5/issues/671
"""The maintainer's answer ("update your code"): later YOLOv5 Detect heads decode out of place when
not exporting in place, splitting the sigmoid output and concatenating the decoded xy, wh and
confidences into a new tensor, so the sigmoid's saved output stays intact. Same attack loop,
stand-in backbone and patch applier."""
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
        self.grid = [torch.zeros(1)] * self.nl  # init grid
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)  # shape(nl,na,2)
        self.register_buffer('anchor_grid', a.clone().view(self.nl, 1, -1, 1, 1, 2))  # shape(nl,1,na,1,1,2)
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv
        self.export = False  # onnx export

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
                xy, wh, conf = y.split((2, 2, self.nc + 1), 4)
                xy = (xy * 2. - 0.5 + self.grid[i].to(x[i].device)) * self.stride[i]  # xy
                wh = (wh * 2) ** 2 * self.anchor_grid[i]  # wh
                y = torch.cat((xy, wh, conf), 4)
                z.append(y.view(bs, -1, self.no))

        return x if self.training else (torch.cat(z, 1), x)

    @staticmethod
    def _make_grid(nx=20, ny=20):
        yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing='ij')
        return torch.stack((xv, yv), 2).view((1, 1, ny, nx, 2)).float()


class TinyYOLO(nn.Module):
    def __init__(self, nc=3):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.SiLU())
        self.p3 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.SiLU())
        self.p4 = nn.Sequential(nn.Conv2d(16, 16, 3, 2, 1), nn.SiLU())
        self.detect = Detect(nc=nc, anchors=([10, 13, 16, 30], [30, 61, 62, 45]), ch=(16, 16))
        self.detect.stride = torch.tensor([4., 8.])

    def forward(self, img):
        p3 = self.p3(self.stem(img))
        p4 = self.p4(p3)
        return self.detect([p3, p4])


class PatchApplier(nn.Module):
    def forward(self, img_batch, patch, top=8, left=8):
        _, _, h, w = img_batch.shape
        ph, pw = patch.shape[-2:]
        pad = (left, w - left - pw, top, h - top - ph)
        padded = nn.functional.pad(patch, pad).unsqueeze(0)
        mask = nn.functional.pad(torch.ones_like(patch), pad).unsqueeze(0)
        return img_batch * (1 - mask) + padded * mask


yolov5 = TinyYOLO()
yolov5.eval()
for p in yolov5.parameters():
    p.requires_grad_(False)
patch_applier = PatchApplier()
adv_patch = torch.rand(3, 8, 8, requires_grad=True)
optimizer = torch.optim.Adam([adv_patch], lr=0.03)

for epoch in range(3):
    batch = torch.rand(2, 3, 32, 32)
    patched = patch_applier(batch, adv_patch)
    output = yolov5(patched)[0]  # get yolo output
    obj = output[..., 4] * output[..., 5:].max(dim=-1).values
    loss = obj.max(dim=1).values.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    adv_patch.data.clamp_(0, 1)
    print(epoch, loss.item())
