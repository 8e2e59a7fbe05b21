# Source: https://github.com/open-mmlab/mmocr/pull/884
"""Training mmocr's PANet/PSENet text detectors (mmocr #878, #648): the FPEM_FFM neck
(mmocr/models/textdet/necks/fpem_ffm.py) sums the outputs of its repeated FPEMs in place,
`c2_ffm += c2` and so on. After the first FPEM, c2_ffm is that FPEM's output, the result of a
SeparableConv2d's ReLU, which autograd saved for the ReLU's backward, so the second FPEM's `+=`
overwrites it and loss.backward() fails ("one of the variables needed for gradient computation
has been modified by an inplace operation"; the PR replaces `+=` by `c2_ffm = c2_ffm + c2`). The
neck is mmocr's (FPEM, SeparableConv2d, FPEM_FFM); a three-conv stand-in replaces the ResNet
backbone, a 1x1 conv head and a dice loss on random kernels replace PANHead and its loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SeparableConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.depthwise_conv = nn.Conv2d(in_channels=in_channels, out_channels=in_channels, kernel_size=3,
                                        padding=1, stride=stride, groups=in_channels)
        self.pointwise_conv = nn.Conv2d(in_channels=in_channels, out_channels=out_channels, kernel_size=1)
        self.bn = nn.BatchNorm2d(out_channels)
        self.act = nn.ReLU()

    def forward(self, x):
        x = self.depthwise_conv(x)
        x = self.pointwise_conv(x)
        x = self.bn(x)
        x = self.act(x)
        return x


class FPEM(nn.Module):
    """FPN-like feature fusion module in PANet."""

    def __init__(self, in_channels=128):
        super().__init__()
        self.up_add1 = SeparableConv2d(in_channels, in_channels, 1)
        self.up_add2 = SeparableConv2d(in_channels, in_channels, 1)
        self.up_add3 = SeparableConv2d(in_channels, in_channels, 1)
        self.down_add1 = SeparableConv2d(in_channels, in_channels, 2)
        self.down_add2 = SeparableConv2d(in_channels, in_channels, 2)
        self.down_add3 = SeparableConv2d(in_channels, in_channels, 2)

    def forward(self, c2, c3, c4, c5):
        # upsample
        c4 = self.up_add1(self._upsample_add(c5, c4))  # c4 shape
        c3 = self.up_add2(self._upsample_add(c4, c3))
        c2 = self.up_add3(self._upsample_add(c3, c2))

        # downsample
        c3 = self.down_add1(self._upsample_add(c3, c2))
        c4 = self.down_add2(self._upsample_add(c4, c3))
        c5 = self.down_add3(self._upsample_add(c5, c4))  # c4 / 2
        return c2, c3, c4, c5

    def _upsample_add(self, x, y):
        return F.interpolate(x, size=y.size()[2:]) + y


class FPEM_FFM(nn.Module):
    """This code is from https://github.com/WenmuZhou/PAN.pytorch."""

    def __init__(self, in_channels, conv_out=128, fpem_repeat=2, align_corners=False):
        super().__init__()
        # reduce layers
        self.reduce_conv_c2 = nn.Sequential(
            nn.Conv2d(in_channels=in_channels[0], out_channels=conv_out, kernel_size=1),
            nn.BatchNorm2d(conv_out), nn.ReLU())
        self.reduce_conv_c3 = nn.Sequential(
            nn.Conv2d(in_channels=in_channels[1], out_channels=conv_out, kernel_size=1),
            nn.BatchNorm2d(conv_out), nn.ReLU())
        self.reduce_conv_c4 = nn.Sequential(
            nn.Conv2d(in_channels=in_channels[2], out_channels=conv_out, kernel_size=1),
            nn.BatchNorm2d(conv_out), nn.ReLU())
        self.reduce_conv_c5 = nn.Sequential(
            nn.Conv2d(in_channels=in_channels[3], out_channels=conv_out, kernel_size=1),
            nn.BatchNorm2d(conv_out), nn.ReLU())
        self.align_corners = align_corners
        self.fpems = nn.ModuleList()
        for _ in range(fpem_repeat):
            self.fpems.append(FPEM(conv_out))

    def forward(self, x):
        c2, c3, c4, c5 = x
        # reduce channel
        c2 = self.reduce_conv_c2(c2)
        c3 = self.reduce_conv_c3(c3)
        c4 = self.reduce_conv_c4(c4)
        c5 = self.reduce_conv_c5(c5)

        # FPEM
        for i, fpem in enumerate(self.fpems):
            c2, c3, c4, c5 = fpem(c2, c3, c4, c5)
            if i == 0:
                c2_ffm = c2
                c3_ffm = c3
                c4_ffm = c4
                c5_ffm = c5
            else:
                c2_ffm += c2
                c3_ffm += c3
                c4_ffm += c4
                c5_ffm += c5

        # FFM
        c5 = F.interpolate(c5_ffm, c2_ffm.size()[-2:], mode='bilinear', align_corners=self.align_corners)
        c4 = F.interpolate(c4_ffm, c2_ffm.size()[-2:], mode='bilinear', align_corners=self.align_corners)
        c3 = F.interpolate(c3_ffm, c2_ffm.size()[-2:], mode='bilinear', align_corners=self.align_corners)
        outs = [c2_ffm, c3, c4, c5]
        return tuple(outs)


class TinyBackbone(nn.Module):
    """Stands in for the ResNet18 backbone: four feature maps at strides 4, 8, 16, 32."""

    def __init__(self, channels=(8, 16, 32, 64)):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, channels[0], 3, stride=4, padding=1), nn.ReLU())
        self.stages = nn.ModuleList(
            nn.Sequential(nn.Conv2d(cin, cout, 3, stride=2, padding=1), nn.ReLU())
            for cin, cout in zip(channels[:-1], channels[1:]))

    def forward(self, img):
        feats = [self.stem(img)]
        for stage in self.stages:
            feats.append(stage(feats[-1]))
        return feats


class PANet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = TinyBackbone()
        self.neck = FPEM_FFM(in_channels=[8, 16, 32, 64], conv_out=16)
        self.out_conv = nn.Conv2d(4 * 16, 6, kernel_size=1)

    def forward(self, img):
        outs = self.neck(self.backbone(img))
        return self.out_conv(torch.cat(outs, dim=1))


def dice_loss(pred, target, eps=1e-3):
    pred = torch.sigmoid(pred).flatten(1)
    target = target.flatten(1)
    a = (pred * target).sum(1)
    b = (pred * pred).sum(1) + eps
    c = (target * target).sum(1) + eps
    return (1 - 2 * a / (b + c)).mean()


model = PANet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for it in range(2):
    img = torch.randn(2, 3, 64, 64)
    gt_kernels = (torch.rand(2, 6, 16, 16) > 0.5).float()
    preds = model(img)
    loss = dice_loss(preds, gt_kernels)
    optimizer.zero_grad()
    loss.backward()  # expect: GG103
    optimizer.step()
