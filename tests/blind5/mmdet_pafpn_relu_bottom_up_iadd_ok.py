# Source: https://github.com/open-mmlab/mmdetection/pull/9450
"""mmdetection's PAFPN with the fix of PR 9450: the bottom-up path adds out of place,
`inter_outs[i + 1] = inter_outs[i + 1] + self.downsample_convs[i](inter_outs[i])`, so the ReLU
outputs autograd saved keep their values with `act_cfg=dict(type='ReLU')`. A minimal ConvModule
stands in for mmcv's, a two-stage conv backbone and a shared objectness head with a BCE loss on
random targets stand in for ResNet and RetinaHead."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvModule(nn.Module):
    """conv / norm / activation block, as mmcv.cnn.ConvModule builds it from its configs."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 norm_cfg=None, act_cfg=dict(type='ReLU'), inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                              bias=norm_cfg is None)
        self.norm = nn.BatchNorm2d(out_channels) if norm_cfg is not None else None
        self.activate = nn.ReLU(inplace=inplace) if act_cfg is not None else None

    def forward(self, x):
        x = self.conv(x)
        if self.norm is not None:
            x = self.norm(x)
        if self.activate is not None:
            x = self.activate(x)
        return x


class FPN(nn.Module):
    def __init__(self, in_channels, out_channels, num_outs, start_level=0, end_level=-1,
                 norm_cfg=None, act_cfg=None, upsample_cfg=dict(mode='nearest')):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_ins = len(in_channels)
        self.num_outs = num_outs
        self.upsample_cfg = upsample_cfg.copy()
        self.backbone_end_level = self.num_ins if end_level == -1 else end_level
        self.start_level = start_level
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        for i in range(self.start_level, self.backbone_end_level):
            l_conv = ConvModule(in_channels[i], out_channels, 1, norm_cfg=norm_cfg, act_cfg=act_cfg, inplace=False)
            fpn_conv = ConvModule(out_channels, out_channels, 3, padding=1, norm_cfg=norm_cfg, act_cfg=act_cfg,
                                  inplace=False)
            self.lateral_convs.append(l_conv)
            self.fpn_convs.append(fpn_conv)


class PAFPN(FPN):
    """Path Aggregation Network for Instance Segmentation."""

    def __init__(self, in_channels, out_channels, num_outs, start_level=0, end_level=-1,
                 norm_cfg=None, act_cfg=None):
        super().__init__(in_channels, out_channels, num_outs, start_level, end_level,
                         norm_cfg=norm_cfg, act_cfg=act_cfg)
        # add extra bottom up pathway
        self.downsample_convs = nn.ModuleList()
        self.pafpn_convs = nn.ModuleList()
        for i in range(self.start_level + 1, self.backbone_end_level):
            d_conv = ConvModule(out_channels, out_channels, 3, stride=2, padding=1, norm_cfg=norm_cfg,
                                act_cfg=act_cfg, inplace=False)
            pafpn_conv = ConvModule(out_channels, out_channels, 3, padding=1, norm_cfg=norm_cfg,
                                    act_cfg=act_cfg, inplace=False)
            self.downsample_convs.append(d_conv)
            self.pafpn_convs.append(pafpn_conv)

    def forward(self, inputs):
        assert len(inputs) == len(self.in_channels)

        # build laterals
        laterals = [
            lateral_conv(inputs[i + self.start_level])
            for i, lateral_conv in enumerate(self.lateral_convs)
        ]

        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] = laterals[i - 1] + F.interpolate(
                laterals[i], size=prev_shape, mode='nearest')

        # build outputs
        # part 1: from original levels
        inter_outs = [
            self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)
        ]

        # part 2: add bottom-up path
        for i in range(0, used_backbone_levels - 1):
            inter_outs[i + 1] = inter_outs[i + 1] + self.downsample_convs[i](inter_outs[i])

        outs = []
        outs.append(inter_outs[0])
        outs.extend([
            self.pafpn_convs[i - 1](inter_outs[i])
            for i in range(1, used_backbone_levels)
        ])

        # part 3: add extra levels
        if self.num_outs > len(outs):
            for i in range(self.num_outs - used_backbone_levels):
                outs.append(F.max_pool2d(outs[-1], 1, stride=2))
        return tuple(outs)


class TinyBackbone(nn.Module):
    def __init__(self, channels=(8, 16)):
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


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = TinyBackbone()
        self.neck = PAFPN(in_channels=[8, 16], out_channels=16, num_outs=3,
                          act_cfg=dict(type='ReLU'))
        self.cls_head = nn.Conv2d(16, 3, 3, padding=1)

    def forward(self, img):
        return [self.cls_head(feat) for feat in self.neck(self.backbone(img))]


model = Detector()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for it in range(2):
    img = torch.randn(2, 3, 64, 64)
    cls_scores = model(img)
    targets = [(torch.rand_like(score) > 0.9).float() for score in cls_scores]
    loss = sum(F.binary_cross_entropy_with_logits(score, target)
               for score, target in zip(cls_scores, targets))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
