# Source: https://github.com/OpenFirework/pytorch_solov2/issues/22
"""Fixed twin (the fix given in the thread). SOLOv2 (OpenFirework/pytorch_solov2) MaskFeatHead: training raises "one of the variables needed
for gradient computation has been modified by an inplace operation: [torch.FloatTensor
[1, 128, 192, 120]], which is output 0 of ReluBackward0, is at version 3; expected version 0".

The head runs level 0 through conv -> GroupNorm -> ReLU and accumulates the other FPN levels into
that tensor with `feature_add_all_level += self.convs_all_levels[i](input_p)`. ReluBackward0 saves
its output to compute its gradient; the three in-place additions bump it to version 3, so
loss.backward() fails. The fix given in the thread: write
`feature_add_all_level = self.convs_all_levels[i](input_p) + feature_add_all_level`.
Channels, image sizes and the rest of the detector are shrunk; the loss is a stand-in for the
SOLOv2 mask loss.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def normal_init(module, mean=0, std=1, bias=0):
    nn.init.normal_(module.weight, mean, std)
    if hasattr(module, 'bias') and module.bias is not None:
        nn.init.constant_(module.bias, bias)


class MaskFeatHead(nn.Module):
    def __init__(self, in_channels, out_channels, start_level, end_level, num_classes,
                 conv_cfg=None, norm_cfg=None):
        super(MaskFeatHead, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.start_level = start_level
        self.end_level = end_level
        assert start_level >= 0 and end_level >= start_level
        self.num_classes = num_classes
        self.conv_cfg = conv_cfg
        self.norm_cfg = norm_cfg

        self.convs_all_levels = nn.ModuleList()
        for i in range(self.start_level, self.end_level + 1):
            convs_per_level = nn.Sequential()
            if i == 0:
                one_conv = nn.Sequential(
                    nn.Conv2d(self.in_channels, self.out_channels, 3, padding=1, bias=False),
                    nn.GroupNorm(num_channels=self.out_channels, num_groups=8),
                    nn.ReLU(inplace=False))
                convs_per_level.add_module('conv' + str(i), one_conv)
                self.convs_all_levels.append(convs_per_level)
                continue

            for j in range(i):
                if j == 0:
                    chn = self.in_channels + 2 if i == 3 else self.in_channels
                    one_conv = nn.Sequential(
                        nn.Conv2d(chn, self.out_channels, 3, padding=1, bias=False),
                        nn.GroupNorm(num_channels=self.out_channels, num_groups=8),
                        nn.ReLU(inplace=False))
                    convs_per_level.add_module('conv' + str(j), one_conv)
                    one_upsample = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)
                    convs_per_level.add_module('upsample' + str(j), one_upsample)
                    continue

                one_conv = nn.Sequential(
                    nn.Conv2d(self.out_channels, self.out_channels, 3, padding=1, bias=False),
                    nn.GroupNorm(num_channels=self.out_channels, num_groups=8),
                    nn.ReLU(inplace=False))
                convs_per_level.add_module('conv' + str(j), one_conv)
                one_upsample = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)
                convs_per_level.add_module('upsample' + str(j), one_upsample)

            self.convs_all_levels.append(convs_per_level)

        self.conv_pred = nn.Sequential(
            nn.Conv2d(self.out_channels, self.num_classes, 1, padding=0, bias=False),
            nn.GroupNorm(num_channels=self.out_channels, num_groups=8),
            nn.ReLU(inplace=True))

    def init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                normal_init(m, std=0.01)

    def forward(self, inputs):
        assert len(inputs) == (self.end_level - self.start_level + 1)

        feature_add_all_level = self.convs_all_levels[0](inputs[0])
        for i in range(1, len(inputs)):
            input_p = inputs[i]
            if i == 3:
                input_feat = input_p
                x_range = torch.linspace(-1, 1, input_feat.shape[-1], device=input_feat.device)
                y_range = torch.linspace(-1, 1, input_feat.shape[-2], device=input_feat.device)
                y, x = torch.meshgrid(y_range, x_range, indexing='ij')
                y = y.expand([input_feat.shape[0], 1, -1, -1])
                x = x.expand([input_feat.shape[0], 1, -1, -1])
                coord_feat = torch.cat([x, y], 1)
                input_p = torch.cat([input_p, coord_feat], 1)

            # fix from the thread: out of place, the ReLU output keeps version 0
            feature_add_all_level = self.convs_all_levels[i](input_p) + feature_add_all_level

        feature_pred = self.conv_pred(feature_add_all_level)
        return feature_pred


class TinyFPN(nn.Module):
    """Stand-in for ResNet + FPN: four feature maps at strides 4, 8, 16, 32."""
    def __init__(self, out_channels=16):
        super().__init__()
        self.stem = nn.Conv2d(3, out_channels, 3, stride=4, padding=1)
        self.downs = nn.ModuleList([nn.Conv2d(out_channels, out_channels, 3, stride=2, padding=1)
                                    for _ in range(3)])

    def forward(self, img):
        feats = [self.stem(img)]
        for down in self.downs:
            feats.append(down(feats[-1]))
        return feats


class SOLOv2(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = TinyFPN(16)
        self.mask_feat_head = MaskFeatHead(16, 16, 0, 3, 16)
        self.mask_feat_head.init_weights()

    def forward(self, img):
        x = self.backbone(img)
        return self.mask_feat_head(x[0:4])


def train(model, optimizer, epochs=2, steps=2):
    model.train()
    for epoch in range(epochs):
        for step in range(steps):
            img = torch.randn(2, 3, 64, 64)
            gt_masks = torch.rand(2, 16, 16, 16)
            mask_feat_pred = model(img)
            loss = F.binary_cross_entropy_with_logits(mask_feat_pred, gt_masks)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print('epoch', epoch, 'step', step, 'loss', loss.item())


model = SOLOv2()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
train(model, optimizer)
