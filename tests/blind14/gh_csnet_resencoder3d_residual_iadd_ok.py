# Source: https://github.com/iMED-Lab/CS-Net/pull/6
"""CS-Net 3D training with the PR's fix: ResEncoder3d adds the shortcut out of place
(`out = out + residual`), so the ReLU output saved for the backward is left intact. The MRA loader,
the weighted-CE and Dice losses, metrics3d and visdom are small stand-ins written here; the
network is the repository's CSNet3D, run on CPU on two 16x16x16 volumes without DataParallel.
"""
from __future__ import division
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim


# ---- model/csnet_3d.py ----
def downsample():
    return nn.MaxPool3d(kernel_size=2, stride=2)


def deconv(in_channels, out_channels):
    return nn.ConvTranspose3d(in_channels, out_channels, kernel_size=2, stride=2)


def initialize_weights(*models):
    for model in models:
        for m in model.modules():
            if isinstance(m, nn.Conv3d) or isinstance(m, nn.Linear):
                nn.init.kaiming_normal_(m.weight)
                if m.bias is not None:
                    m.bias.data.zero_()
            elif isinstance(m, nn.BatchNorm3d):
                m.weight.data.fill_(1)
                m.bias.data.zero_()


class ResEncoder3d(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(ResEncoder3d, self).__init__()
        self.conv1 = nn.Conv3d(in_channels, out_channels, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm3d(out_channels)
        self.conv2 = nn.Conv3d(out_channels, out_channels, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm3d(out_channels)
        self.relu = nn.ReLU(inplace=False)
        self.conv1x1 = nn.Conv3d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        residual = self.conv1x1(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = out + residual
        out = self.relu(out)
        return out


class Decoder3d(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(Decoder3d, self).__init__()
        self.conv = nn.Sequential(
            nn.Conv3d(in_channels, out_channels, kernel_size=3, padding=1),
            nn.BatchNorm3d(out_channels),
            nn.ReLU(inplace=False),
            nn.Conv3d(out_channels, out_channels, kernel_size=3, padding=1),
            nn.BatchNorm3d(out_channels),
            nn.ReLU(inplace=False)
        )

    def forward(self, x):
        out = self.conv(x)
        return out


class SpatialAttentionBlock3d(nn.Module):
    def __init__(self, in_channels):
        super(SpatialAttentionBlock3d, self).__init__()
        self.query = nn.Conv3d(in_channels, in_channels // 8, kernel_size=(1, 3, 1), padding=(0, 1, 0))
        self.key = nn.Conv3d(in_channels, in_channels // 8, kernel_size=(3, 1, 1), padding=(1, 0, 0))
        self.judge = nn.Conv3d(in_channels, in_channels // 8, kernel_size=(1, 1, 3), padding=(0, 0, 1))
        self.value = nn.Conv3d(in_channels, in_channels, kernel_size=1)
        self.gamma = nn.Parameter(torch.zeros(1))
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        B, C, H, W, D = x.size()
        proj_query = self.query(x).view(B, -1, W * H * D).permute(0, 2, 1)
        proj_key = self.key(x).view(B, -1, W * H * D)
        proj_judge = self.judge(x).view(B, -1, W * H * D).permute(0, 2, 1)
        affinity1 = torch.matmul(proj_query, proj_key)
        affinity2 = torch.matmul(proj_judge, proj_key)
        affinity = torch.matmul(affinity1, affinity2)
        affinity = self.softmax(affinity)
        proj_value = self.value(x).view(B, -1, H * W * D)
        weights = torch.matmul(proj_value, affinity)
        weights = weights.view(B, C, H, W, D)
        out = self.gamma * weights + x
        return out


class ChannelAttentionBlock3d(nn.Module):
    def __init__(self, in_channels):
        super(ChannelAttentionBlock3d, self).__init__()
        self.gamma = nn.Parameter(torch.zeros(1))
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        B, C, H, W, D = x.size()
        proj_query = x.view(B, C, -1).permute(0, 2, 1)
        proj_key = x.view(B, C, -1)
        proj_judge = x.view(B, C, -1).permute(0, 2, 1)
        affinity1 = torch.matmul(proj_key, proj_query)
        affinity2 = torch.matmul(proj_key, proj_judge)
        affinity = torch.matmul(affinity1, affinity2)
        affinity_new = torch.max(affinity, -1, keepdim=True)[0].expand_as(affinity) - affinity
        affinity_new = self.softmax(affinity_new)
        proj_value = x.view(B, C, -1)
        weights = torch.matmul(affinity_new, proj_value)
        weights = weights.view(B, C, H, W, D)
        out = self.gamma * weights + x
        return out


class AffinityAttention3d(nn.Module):
    def __init__(self, in_channels):
        super(AffinityAttention3d, self).__init__()
        self.sab = SpatialAttentionBlock3d(in_channels)
        self.cab = ChannelAttentionBlock3d(in_channels)

    def forward(self, x):
        sab = self.sab(x)
        cab = self.cab(x)
        out = sab + cab + x
        return out


class CSNet3D(nn.Module):
    def __init__(self, classes, channels):
        super(CSNet3D, self).__init__()
        self.enc_input = ResEncoder3d(channels, 16)
        self.encoder1 = ResEncoder3d(16, 32)
        self.encoder2 = ResEncoder3d(32, 64)
        self.encoder3 = ResEncoder3d(64, 128)
        self.encoder4 = ResEncoder3d(128, 256)
        self.downsample = downsample()
        self.affinity_attention = AffinityAttention3d(256)
        self.attention_fuse = nn.Conv3d(256 * 2, 256, kernel_size=1)
        self.decoder4 = Decoder3d(256, 128)
        self.decoder3 = Decoder3d(128, 64)
        self.decoder2 = Decoder3d(64, 32)
        self.decoder1 = Decoder3d(32, 16)
        self.deconv4 = deconv(256, 128)
        self.deconv3 = deconv(128, 64)
        self.deconv2 = deconv(64, 32)
        self.deconv1 = deconv(32, 16)
        self.final = nn.Conv3d(16, classes, kernel_size=1)
        initialize_weights(self)

    def forward(self, x):
        enc_input = self.enc_input(x)
        down1 = self.downsample(enc_input)
        enc1 = self.encoder1(down1)
        down2 = self.downsample(enc1)
        enc2 = self.encoder2(down2)
        down3 = self.downsample(enc2)
        enc3 = self.encoder3(down3)
        down4 = self.downsample(enc3)
        input_feature = self.encoder4(down4)
        attention = self.affinity_attention(input_feature)
        attention_fuse = input_feature + attention
        up4 = self.deconv4(attention_fuse)
        up4 = torch.cat((enc3, up4), dim=1)
        dec4 = self.decoder4(up4)
        up3 = self.deconv3(dec4)
        up3 = torch.cat((enc2, up3), dim=1)
        dec3 = self.decoder3(up3)
        up2 = self.deconv2(dec3)
        up2 = torch.cat((enc1, up2), dim=1)
        dec2 = self.decoder2(up2)
        up1 = self.deconv1(dec2)
        up1 = torch.cat((enc_input, up1), dim=1)
        dec1 = self.decoder1(up1)
        final = self.final(dec1)
        final = torch.sigmoid(final)
        return final


# ---- utils/losses.py, utils/train_metrics.py, dataloader stand-ins ----
class WeightedCrossEntropyLoss(nn.Module):
    def forward(self, pred, label):
        n_pos = label.float().mean().clamp(min=1e-3)
        weight = torch.stack([n_pos, 1 - n_pos])
        return F.cross_entropy(pred, label, weight=weight)


class DiceLoss(nn.Module):
    def forward(self, pred, label):
        prob = pred[:, 1:2]
        inter = (prob * label).sum()
        return 1 - (2 * inter + 1) / (prob.sum() + label.sum() + 1)


def metrics3d(pred, label, batch_size):
    out = pred.argmax(1)
    tp = ((out == 1) & (label == 1)).sum().item()
    fn = ((out == 0) & (label == 1)).sum().item()
    fp = ((out == 1) & (label == 0)).sum().item()
    iou = tp / max(tp + fn + fp, 1)
    return tp, fn, fp, iou


def mra_batches(n=2, size=16, batch_size=2):
    for _ in range(n):
        image = torch.rand(batch_size, 1, size, size, size)
        label = (torch.rand(batch_size, 1, size, size, size) > 0.9).long()
        yield image, label


args = {'epochs': 1, 'lr': 0.0001, 'batch_size': 2}


def train():
    net = CSNet3D(classes=2, channels=1)
    optimizer = optim.Adam(net.parameters(), lr=args['lr'], weight_decay=0.0005)
    critrion2 = WeightedCrossEntropyLoss()
    critrion = nn.CrossEntropyLoss()
    critrion3 = DiceLoss()
    iters = 1
    for epoch in range(args['epochs']):
        net.train()
        for idx, batch in enumerate(mra_batches(batch_size=args["batch_size"])):
            image = batch[0]
            label = batch[1]
            optimizer.zero_grad()
            pred = net(image)
            loss_dice = critrion3(pred, label)
            label = label.squeeze(1)
            loss_ce = critrion(pred, label)
            loss_wce = critrion2(pred, label)
            loss = (loss_ce + 0.6 * loss_wce + 0.4 * loss_dice) / 3
            loss.backward()
            optimizer.step()
            tp, fn, fp, iou = metrics3d(pred, label, pred.shape[0])
            print('[{0:d}:{1:d}] loss:{2:.6f} TP:{3:.4f} IoU:{4:.4f}'.format(
                epoch + 1, iters, loss.item(), tp / pred.shape[0], iou / pred.shape[0]))
            iters += 1


if __name__ == '__main__':
    train()
