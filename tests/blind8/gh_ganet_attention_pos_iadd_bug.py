# Source: https://github.com/Wolfwjs/GANet/issues/20
"""GANet's transformer encoder on the last backbone level (mmdet/models/necks/dcn_fpn.py) as it
stood when the issue was filed (torch 1.10.2): each AttentionLayer runs its pre_conv (conv, BN,
ReLU, not in place) and then adds the sine position embedding with `x += pos`, overwriting the
ReLU's output, which ReluBackward saved; the training step's backward raises. mmcv's ConvModule
is a small stand-in that does the same tensor operations (conv, BN, ReLU); the lane heads and the
rest of the FPN are reduced to a 1x1 classifier over the encoded features, trained on random
feature maps and lane masks."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvModule(nn.Module):
    """mmcv's ConvModule as GANet configures it: conv, BN, ReLU."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 norm_cfg=None, act_cfg=dict(type='ReLU'), inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride,
                              padding=padding, bias=norm_cfg is None)
        self.bn = nn.BatchNorm2d(out_channels) if norm_cfg is not None else None
        self.activate = nn.ReLU(inplace=inplace) if act_cfg is not None else None

    def forward(self, x):
        x = self.conv(x)
        if self.bn is not None:
            x = self.bn(x)
        if self.activate is not None:
            x = self.activate(x)
        return x


class PositionEmbeddingSine(nn.Module):
    def __init__(self, num_pos_feats=64, temperature=10000, normalize=False, scale=None):
        super().__init__()
        self.num_pos_feats = num_pos_feats
        self.temperature = temperature
        self.normalize = normalize
        if scale is None:
            scale = 2 * math.pi
        self.scale = scale

    def forward(self, mask):
        not_mask = ~mask
        y_embed = not_mask.cumsum(1, dtype=torch.float32)
        x_embed = not_mask.cumsum(2, dtype=torch.float32)
        dim_t = torch.arange(self.num_pos_feats, dtype=torch.float32, device=mask.device)
        dim_t = self.temperature ** (2 * (dim_t // 2) / self.num_pos_feats)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos = torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)
        return pos


def build_position_encoding(hidden_dim, shape):
    mask = torch.zeros(shape, dtype=torch.bool)
    pos_module = PositionEmbeddingSine(hidden_dim // 2)
    pos_embs = pos_module(mask)
    return pos_embs


class AttentionLayer(nn.Module):
    """ Position attention module"""

    def __init__(self, in_dim, out_dim, ratio=4, stride=1):
        super(AttentionLayer, self).__init__()
        self.chanel_in = in_dim
        norm_cfg = dict(type='BN', requires_grad=True)
        act_cfg = dict(type='ReLU')
        self.pre_conv = ConvModule(in_dim, out_dim, kernel_size=3, stride=stride, padding=1,
                                   norm_cfg=norm_cfg, act_cfg=act_cfg, inplace=False)
        self.query_conv = nn.Conv2d(in_channels=out_dim, out_channels=out_dim // ratio, kernel_size=1)
        self.key_conv = nn.Conv2d(in_channels=out_dim, out_channels=out_dim // ratio, kernel_size=1)
        self.value_conv = nn.Conv2d(in_channels=out_dim, out_channels=out_dim, kernel_size=1)
        self.final_conv = ConvModule(out_dim, out_dim, kernel_size=3, padding=1,
                                     norm_cfg=norm_cfg, act_cfg=act_cfg)
        self.softmax = nn.Softmax(dim=-1)
        self.gamma = nn.Parameter(torch.zeros(1))

    def forward(self, x, pos=None):
        x = self.pre_conv(x)
        m_batchsize, _, height, width = x.size()
        if pos is not None:
            x += pos
        proj_query = self.query_conv(x).view(m_batchsize, -1, width * height).permute(0, 2, 1)
        proj_key = self.key_conv(x).view(m_batchsize, -1, width * height)
        energy = torch.bmm(proj_query, proj_key)
        attention = self.softmax(energy)
        attention = attention.permute(0, 2, 1)
        proj_value = self.value_conv(x).view(m_batchsize, -1, width * height)
        out = torch.bmm(proj_value, attention)
        out = out.view(m_batchsize, -1, height, width)
        out_feat = self.gamma * out + x
        out_feat = self.final_conv(out_feat)
        return out_feat


class TransConvEncoderModule(nn.Module):
    def __init__(self, in_dim, attn_in_dims, attn_out_dims, strides, ratios, downscale=True, pos_shape=None):
        super(TransConvEncoderModule, self).__init__()
        attn_layers = []
        for dim1, dim2, stride, ratio in zip(attn_in_dims, attn_out_dims, strides, ratios):
            attn_layers.append(AttentionLayer(dim1, dim2, ratio, stride))
        if pos_shape is not None:
            self.attn_layers = nn.ModuleList(attn_layers)
        else:
            self.attn_layers = nn.Sequential(*attn_layers)
        self.pos_shape = pos_shape
        self.pos_embeds = []
        if pos_shape is not None:
            for dim in attn_out_dims:
                pos_embed = build_position_encoding(dim, pos_shape)
                self.pos_embeds.append(pos_embed)

    def forward(self, src):
        if self.pos_shape is None:
            src = self.attn_layers(src)
        else:
            for layer, pos in zip(self.attn_layers, self.pos_embeds):
                src = layer(src, pos.to(src.device))
        return src


class LaneNet(nn.Module):
    def __init__(self, trans_cfg, num_classes=2):
        super().__init__()
        self.trans_head = TransConvEncoderModule(**trans_cfg)
        self.cls = nn.Conv2d(trans_cfg['attn_out_dims'][-1], num_classes, 1)

    def forward(self, feat):
        return self.cls(self.trans_head(feat))


batch_size = 2
trans_cfg = dict(in_dim=16, attn_in_dims=[16, 16], attn_out_dims=[16, 16], strides=[1, 1],
                 ratios=[4, 4], pos_shape=(batch_size, 5, 8))
model = LaneNet(trans_cfg)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
model.train()
for it in range(2):
    feat = torch.randn(batch_size, 16, 5, 8)  # the backbone's last level
    target = torch.randint(0, 2, (batch_size, 5, 8))  # lane / background
    loss = F.cross_entropy(model(feat), target)
    optimizer.zero_grad()
    loss.backward()  # expect: GG103
    optimizer.step()
    print(it, loss.item())
