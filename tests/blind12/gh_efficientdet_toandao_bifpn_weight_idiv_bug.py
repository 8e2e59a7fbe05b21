# Source: https://github.com/toandaominh1997/EfficientDet.Pytorch/issues/161
"""EfficientDet.Pytorch's BiFPNModule normalises its fusion weights in place after the ReLU:
`w1 = self.relu1(self.w1); w1 /= torch.sum(w1, dim=0) + self.eps` (same for w2). ReLU saves its
output for backward, so train.py's loss.backward() raises "one of the variables needed for
gradient computation has been modified by an inplace operation: [torch.FloatTensor [3, 3]], which
is output 0 of ReluBackward0" (w2 with five levels). The reporter's fix (_ok): divide out of place.
The mmdet-style ConvModule, the backbone, the head and the focal loss are small stand-ins; BIFPN
and BiFPNModule are the repository's, on random feature maps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def xavier_init(module, gain=1, bias=0, distribution='normal'):
    if distribution == 'uniform':
        nn.init.xavier_uniform_(module.weight, gain=gain)
    else:
        nn.init.xavier_normal_(module.weight, gain=gain)
    if hasattr(module, 'bias') and module.bias is not None:
        nn.init.constant_(module.bias, bias)


class ConvModule(nn.Module):
    """Stand-in for the repository's mmdet-style ConvModule: conv, optional BN, optional ReLU."""
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 conv_cfg=None, norm_cfg=None, activation='relu', inplace=True):
        super(ConvModule, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride,
                              padding=padding, bias=norm_cfg is None)
        self.norm = nn.BatchNorm2d(out_channels) if norm_cfg is not None else None
        self.activate = nn.ReLU(inplace=inplace) if activation == 'relu' else None

    def forward(self, x):
        x = self.conv(x)
        if self.norm is not None:
            x = self.norm(x)
        if self.activate is not None:
            x = self.activate(x)
        return x


class BIFPN(nn.Module):
    def __init__(self, in_channels, out_channels, num_outs, start_level=0, end_level=-1, stack=1,
                 add_extra_convs=False, extra_convs_on_inputs=True, relu_before_extra_convs=False,
                 no_norm_on_lateral=False, conv_cfg=None, norm_cfg=None, activation=None):
        super(BIFPN, self).__init__()
        assert isinstance(in_channels, list)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_ins = len(in_channels)
        self.num_outs = num_outs
        self.activation = activation
        self.relu_before_extra_convs = relu_before_extra_convs
        self.no_norm_on_lateral = no_norm_on_lateral
        self.stack = stack
        if end_level == -1:
            self.backbone_end_level = self.num_ins
            assert num_outs >= self.num_ins - start_level
        else:
            self.backbone_end_level = end_level
        self.start_level = start_level
        self.end_level = end_level
        self.add_extra_convs = add_extra_convs
        self.extra_convs_on_inputs = extra_convs_on_inputs

        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        self.stack_bifpn_convs = nn.ModuleList()
        for i in range(self.start_level, self.backbone_end_level):
            l_conv = ConvModule(in_channels[i], out_channels, 1, conv_cfg=conv_cfg,
                                norm_cfg=norm_cfg if not self.no_norm_on_lateral else None,
                                activation=self.activation, inplace=False)
            self.lateral_convs.append(l_conv)
        for ii in range(stack):
            self.stack_bifpn_convs.append(BiFPNModule(channels=out_channels,
                                                      levels=self.backbone_end_level - self.start_level,
                                                      conv_cfg=conv_cfg, norm_cfg=norm_cfg,
                                                      activation=activation))
        self.init_weights()

    def init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                xavier_init(m, distribution='uniform')

    def forward(self, inputs):
        assert len(inputs) == len(self.in_channels)
        laterals = [
            lateral_conv(inputs[i + self.start_level])
            for i, lateral_conv in enumerate(self.lateral_convs)
        ]
        used_backbone_levels = len(laterals)
        for bifpn_module in self.stack_bifpn_convs:
            laterals = bifpn_module(laterals)
        outs = laterals
        if self.num_outs > len(outs):
            for i in range(self.num_outs - used_backbone_levels):
                outs.append(F.max_pool2d(outs[-1], 1, stride=2))
        return tuple(outs)


class BiFPNModule(nn.Module):
    def __init__(self, channels, levels, init=0.5, conv_cfg=None, norm_cfg=None, activation=None,
                 eps=0.0001):
        super(BiFPNModule, self).__init__()
        self.activation = activation
        self.eps = eps
        self.levels = levels
        self.bifpn_convs = nn.ModuleList()
        # weighted
        self.w1 = nn.Parameter(torch.Tensor(2, levels).fill_(init))
        self.relu1 = nn.ReLU()
        self.w2 = nn.Parameter(torch.Tensor(3, levels - 2).fill_(init))
        self.relu2 = nn.ReLU()
        for jj in range(2):
            for i in range(self.levels - 1):
                fpn_conv = nn.Sequential(
                    ConvModule(channels, channels, 3, padding=1, conv_cfg=conv_cfg,
                               norm_cfg=norm_cfg, activation=self.activation, inplace=False)
                )
                self.bifpn_convs.append(fpn_conv)

    def forward(self, inputs):
        assert len(inputs) == self.levels
        levels = self.levels
        # w relu
        w1 = self.relu1(self.w1)
        w1 /= torch.sum(w1, dim=0) + self.eps  # normalize
        w2 = self.relu2(self.w2)
        w2 /= torch.sum(w2, dim=0) + self.eps  # normalize
        # build top-down
        idx_bifpn = 0
        pathtd = inputs
        inputs_clone = []
        for in_tensor in inputs:
            inputs_clone.append(in_tensor.clone())

        for i in range(levels - 1, 0, -1):
            pathtd[i - 1] = (w1[0, i - 1] * pathtd[i - 1] + w1[1, i - 1] * F.interpolate(
                pathtd[i], scale_factor=2, mode='nearest')) / (w1[0, i - 1] + w1[1, i - 1] + self.eps)
            pathtd[i - 1] = self.bifpn_convs[idx_bifpn](pathtd[i - 1])
            idx_bifpn = idx_bifpn + 1
        # build down-top
        for i in range(0, levels - 2, 1):
            pathtd[i + 1] = (w2[0, i] * pathtd[i + 1] + w2[1, i] * F.max_pool2d(pathtd[i], kernel_size=2) +
                             w2[2, i] * inputs_clone[i + 1]) / (w2[0, i] + w2[1, i] + w2[2, i] + self.eps)
            pathtd[i + 1] = self.bifpn_convs[idx_bifpn](pathtd[i + 1])
            idx_bifpn = idx_bifpn + 1

        pathtd[levels - 1] = (w1[0, levels - 1] * pathtd[levels - 1] + w1[1, levels - 1] * F.max_pool2d(
            pathtd[levels - 2], kernel_size=2)) / (w1[0, levels - 1] + w1[1, levels - 1] + self.eps)
        pathtd[levels - 1] = self.bifpn_convs[idx_bifpn](pathtd[levels - 1])
        return pathtd


class EfficientDet(nn.Module):
    """Backbone and head are stand-ins: strided convs and a shared class-score conv per level."""
    def __init__(self, num_classes=3, channels=(4, 6, 8, 8, 8), width=8):
        super().__init__()
        self.stem = nn.Conv2d(3, channels[0], 3, stride=2, padding=1)
        self.stages = nn.ModuleList(
            nn.Conv2d(channels[i - 1], channels[i], 3, stride=2, padding=1) for i in range(1, len(channels)))
        self.neck = BIFPN(in_channels=list(channels), out_channels=width, num_outs=5)
        self.cls_head = nn.Conv2d(width, num_classes, 3, padding=1)

    def forward(self, img):
        feats = [self.stem(img)]
        for stage in self.stages:
            feats.append(F.relu(stage(feats[-1])))
        return [self.cls_head(f) for f in self.neck(feats)]


def focal_loss(logits_list, targets_list, alpha=0.25, gamma=2.0):
    losses = []
    for logits, targets in zip(logits_list, targets_list):
        p = torch.sigmoid(logits)
        ce = F.binary_cross_entropy_with_logits(logits, targets, reduction='none')
        p_t = p * targets + (1 - p) * (1 - targets)
        losses.append((alpha * (1 - p_t) ** gamma * ce).mean())
    return sum(losses)


model = EfficientDet()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for iteration in range(2):
    images = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        shapes = [o.shape for o in model(images)]
    targets = [torch.randint(0, 2, s).float() for s in shapes]
    classification = model(images)
    loss = focal_loss(classification, targets)
    optimizer.zero_grad()
    loss.backward()  # expect: GG103
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    optimizer.step()
