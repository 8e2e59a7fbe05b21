# Source: https://github.com/lyongo/NWPU-MOC/issues/4
"""mmdet-style FPN head (models/FPN/FPN_Head.py): each lateral is a 1x1 ConvModule ending in ReLU,
and the top-down pathway adds the upsampled coarser lateral in place,
laterals[i - 1] += F.interpolate(laterals[i], ...). The ReLU saved its output for the backward
(output 0 of ReluBackward0, is at version 1); the maintainer's answer: change += into = ... + ..."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.activate = nn.ReLU()

    def forward(self, x):
        return self.activate(self.conv(x))


class FPN(nn.Module):
    def __init__(self, in_channels=(4, 8, 16), out_channels=8):
        super().__init__()
        self.lateral_convs = nn.ModuleList(ConvModule(c, out_channels, 1) for c in in_channels)
        self.fpn_convs = nn.ModuleList(ConvModule(out_channels, out_channels, 3, padding=1) for _ in in_channels)

    def forward(self, inputs):
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode="nearest")
        return [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]


class CountingHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fpn = FPN()
        self.density = nn.Conv2d(8, 1, 1)

    def forward(self, feats):
        return self.density(self.fpn(feats)[0])


model = CountingHead()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
for step in range(2):
    feats = [torch.randn(2, 4, 16, 16), torch.randn(2, 8, 8, 8), torch.randn(2, 16, 4, 4)]
    gt_density = torch.rand(2, 1, 16, 16)
    loss = F.mse_loss(model(feats), gt_density)
    optimizer.zero_grad()
    loss.backward()  # expect: GG103
    optimizer.step()
