# Source: https://github.com/PKU-EPIC/DREDS/issues/6
"""Fixed twin of q_dreds_swindrnet_uperhead_lateral_iadd_bug.py. Training SwinDRNet (DREDS depth
restoration) stopped at `self.loss_train_iter.backward()` with "one of the variables needed for
gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [8, 512,
14, 14]], which is output 0 of ReluBackward0": the decoder's UPerHead built its top-down path with
`laterals[i - 1] += resize(laterals[i], ...)` on the output of a ConvModule's ReLU, which ReLU saved.
The thread has no answer; the right fix, applied here (the one mmdet/mmseg applied to the same FPN
code), adds out of place: `laterals[i - 1] = laterals[i - 1] + resize(...)`. The two Swin backbones
and the cross-attention fusion are small conv stand-ins; UPerHead, PPM, ConvModule and resize are
kept; sizes are tiny.
"""
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F


def resize(input, size=None, scale_factor=None, mode='nearest', align_corners=None, warning=True):
    if warning:
        if size is not None and align_corners:
            input_h, input_w = tuple(int(x) for x in input.shape[2:])
            output_h, output_w = tuple(int(x) for x in size)
            if output_h > input_h or output_w > output_h:
                warnings.warn('the output would more aligned if input size is `x+1` and out size is `nx+1`')
    if isinstance(size, torch.Size):
        size = tuple(int(x) for x in size)
    return F.interpolate(input, size, scale_factor, mode, align_corners)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=False, inplace=True, order=('conv', 'norm', 'act')):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias)
        self.bn = nn.BatchNorm2d(out_channels)
        self.activate = nn.ReLU(inplace)
        self.order = order

    def forward(self, x, activate=True, norm=True):
        for layer in self.order:
            if layer == 'conv':
                x = self.conv(x)
            elif layer == 'norm' and norm:
                x = self.bn(x)
            elif layer == 'act' and activate:
                x = self.activate(x)
        return x


class PPM(nn.ModuleList):
    def __init__(self, pool_scales, in_channels, channels, align_corners):
        super(PPM, self).__init__()
        self.pool_scales = pool_scales
        self.align_corners = align_corners
        for pool_scale in pool_scales:
            self.append(nn.Sequential(nn.AdaptiveAvgPool2d(pool_scale), ConvModule(in_channels, channels, 1)))

    def forward(self, x):
        ppm_outs = []
        for ppm in self:
            ppm_out = ppm(x)
            upsampled_ppm_out = resize(ppm_out, size=x.size()[2:], mode='bilinear', align_corners=self.align_corners)
            ppm_outs.append(upsampled_ppm_out)
        return ppm_outs


class UPerHead(nn.Module):
    def __init__(self, pool_scales=(1, 2, 3, 6), num_classes=150, in_channels=[96, 192, 384, 768],
                 channels=512, dropout_ratio=0.1, align_corners=False, in_index=[0, 1, 2, 3], img_size=512):
        super(UPerHead, self).__init__()
        self.in_channels = in_channels
        self.channels = channels
        self.align_corners = align_corners
        self.input_transform = 'multiple_select'
        self.in_index = in_index
        self.psp_modules = PPM(pool_scales, self.in_channels[-1], self.channels, align_corners=self.align_corners)
        self.bottleneck = ConvModule(self.in_channels[-1] + len(pool_scales) * self.channels, self.channels, 3, padding=1)
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        for in_channels in self.in_channels[:-1]:  # skip the top layer
            l_conv = ConvModule(in_channels, self.channels, 1, inplace=False)
            fpn_conv = ConvModule(self.channels, self.channels, 3, padding=1, inplace=False)
            self.lateral_convs.append(l_conv)
            self.fpn_convs.append(fpn_conv)
        self.fpn_bottleneck = ConvModule(len(self.in_channels) * self.channels, self.channels, 3, padding=1)
        self.conv_seg = nn.Conv2d(self.channels, num_classes, kernel_size=1)
        self.dropout = nn.Dropout2d(dropout_ratio)

    def psp_forward(self, inputs):
        x = inputs[-1]
        psp_outs = [x]
        psp_outs.extend(self.psp_modules(x))
        psp_outs = torch.cat(psp_outs, dim=1)
        return self.bottleneck(psp_outs)

    def _transform_inputs(self, inputs):
        if self.input_transform == 'multiple_select':
            inputs = [inputs[i] for i in self.in_index]
        else:
            inputs = inputs[self.in_index]
        return inputs

    def cls_seg(self, feat):
        if self.dropout is not None:
            feat = self.dropout(feat)
        return self.conv_seg(feat)

    def forward(self, inputs, input_org_shape):
        inputs = self._transform_inputs(inputs)

        # build laterals
        laterals = [
            lateral_conv(inputs[i])
            for i, lateral_conv in enumerate(self.lateral_convs)
        ]
        laterals.append(self.psp_forward(inputs))

        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] = laterals[i - 1] + resize(
                laterals[i],
                size=prev_shape,
                mode='bilinear',
                align_corners=self.align_corners)

        # build outputs
        fpn_outs = [
            self.fpn_convs[i](laterals[i])
            for i in range(used_backbone_levels - 1)
        ]
        fpn_outs.append(laterals[-1])
        for i in range(used_backbone_levels - 1, 0, -1):
            fpn_outs[i] = resize(fpn_outs[i], size=fpn_outs[0].shape[2:], mode='bilinear',
                                 align_corners=self.align_corners)
        fpn_outs = torch.cat(fpn_outs, dim=1)
        output = self.fpn_bottleneck(fpn_outs)
        output = self.cls_seg(output)
        output = resize(input=output, size=(input_org_shape[0], input_org_shape[1]), mode='bilinear',
                        align_corners=self.align_corners)
        return output


class SwinTransformerSys(nn.Module):
    """Stand-in backbone: four feature levels at strides 4, 8, 16, 32."""

    def __init__(self, in_chans=3, embed_dim=4):
        super().__init__()
        dims = [embed_dim, 2 * embed_dim, 4 * embed_dim, 8 * embed_dim]
        self.stages = nn.ModuleList()
        prev = in_chans
        for i, d in enumerate(dims):
            self.stages.append(nn.Sequential(nn.Conv2d(prev, d, 4 if i == 0 else 2, stride=4 if i == 0 else 2), nn.GELU()))
            prev = d

    def forward(self, x):
        features = []
        for stage in self.stages:
            x = stage(x)
            features.append(x)
        return features


class CrossAttention(nn.Module):
    """Stand-in fusion of the rgb and depth features of one level."""

    def __init__(self, in_channel, depth=1, num_heads=1):
        super().__init__()
        self.proj = nn.Conv2d(2 * in_channel, in_channel, 1)

    def forward(self, feats):
        return self.proj(torch.cat(feats, 1))


class SwinDRNet(nn.Module):
    def __init__(self, embed_dim=4, img_size=64):
        super(SwinDRNet, self).__init__()
        self.img_size = img_size
        self.backbone_rgb_branch = SwinTransformerSys(embed_dim=embed_dim)
        self.backbone_xyz_branch = SwinTransformerSys(embed_dim=embed_dim)
        in_channels = [3 * embed_dim * 2 ** k for k in range(4)]
        self.decode_head_depth_restoration = UPerHead(num_classes=1, in_channels=in_channels, channels=16, img_size=self.img_size)
        self.decode_head_confidence = UPerHead(num_classes=2, in_channels=in_channels, channels=16, img_size=self.img_size)
        self.cross_attention_0 = CrossAttention(in_channel=embed_dim, depth=1, num_heads=1)
        self.cross_attention_1 = CrossAttention(in_channel=2 * embed_dim, depth=1, num_heads=1)
        self.cross_attention_2 = CrossAttention(in_channel=4 * embed_dim, depth=1, num_heads=1)
        self.cross_attention_3 = CrossAttention(in_channel=8 * embed_dim, depth=1, num_heads=1)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, rgb, depth):
        rgb = rgb.repeat(1, 3, 1, 1) if rgb.size()[1] == 1 else rgb
        depth = depth.repeat(1, 3, 1, 1) if depth.size()[1] == 1 else depth

        input_org_shape = rgb.shape[2:]
        rgb_feature = self.backbone_rgb_branch(rgb)
        depth_feature = self.backbone_xyz_branch(depth)

        shortcut = torch.unsqueeze(depth[:, 2, :, :], 1)

        # fusion
        x = []
        out = self.cross_attention_0(tuple([rgb_feature[0], depth_feature[0]]))
        x.append(torch.cat((out, rgb_feature[0], depth_feature[0]), 1))
        out = self.cross_attention_1(tuple([rgb_feature[1], depth_feature[1]]))
        x.append(torch.cat((out, rgb_feature[1], depth_feature[1]), 1))
        out = self.cross_attention_2(tuple([rgb_feature[2], depth_feature[2]]))
        x.append(torch.cat((out, rgb_feature[2], depth_feature[2]), 1))
        out = self.cross_attention_3(tuple([rgb_feature[3], depth_feature[3]]))
        x.append(torch.cat((out, rgb_feature[3], depth_feature[3]), 1))

        pred_depth_initial = self.decode_head_depth_restoration(x, input_org_shape)
        confidence = self.softmax(self.decode_head_confidence(x, input_org_shape))

        confidence_depth = confidence[:, 0, :, :].unsqueeze(1)
        confidence_initial = confidence[:, 1, :, :].unsqueeze(1)

        pred_depth = confidence_depth * shortcut + confidence_initial * pred_depth_initial
        return pred_depth, pred_depth_initial, confidence_depth, confidence_initial


class Trainer:
    def __init__(self, model, train_loader, base_lr=1e-4, max_iterations=10):
        self.model, self.train_loader = model, train_loader
        self.base_lr, self.max_iterations = base_lr, max_iterations
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=base_lr)
        self.total_iter_num = 0
        self.iterator = range(2)

    def forward(self, sample_batched, mode='train'):
        rgbs, sim_ds, syn_ds = sample_batched['rgb'], sample_batched['sim_depth'], sample_batched['syn_depth']
        outputs_depth, pred_depth_initial, confidence_sim_ds, confidence_initial = self.model(rgbs, sim_ds)
        loss = F.l1_loss(outputs_depth, syn_ds) + 0.5 * F.l1_loss(pred_depth_initial, syn_ds)
        if mode == 'train':
            self.loss_train_iter = loss
        return outputs_depth, confidence_sim_ds, confidence_initial

    def train(self):
        for epoch in self.iterator:
            self.epoch = epoch + 1
            for _, batch in enumerate(self.train_loader):
                self.model.train()
                sample_batched = batch
                torch.set_grad_enabled(True)
                # torch.autograd.set_detect_anomaly(True)
                outputs_depth, confidence_sim_ds, confidence_initial = self.forward(sample_batched, mode='train')

                self.optimizer.zero_grad()
                self.loss_train_iter.backward()
                self.optimizer.step()

                warmup_iters = 5
                if self.total_iter_num < warmup_iters:
                    lr_ = self.base_lr * (self.total_iter_num + 1) / warmup_iters
                else:
                    lr_ = self.base_lr * (1.0 - self.total_iter_num / self.max_iterations)
                for param_group in self.optimizer.param_groups:
                    param_group['lr'] = lr_
                self.total_iter_num += 1
            print('epoch', self.epoch, self.loss_train_iter.item())


torch.manual_seed(0)
train_loader = [{'rgb': torch.rand(2, 3, 64, 64), 'sim_depth': torch.rand(2, 1, 64, 64),
                 'syn_depth': torch.rand(2, 1, 64, 64)} for _ in range(2)]
trainer = Trainer(SwinDRNet(), train_loader)
trainer.train()
