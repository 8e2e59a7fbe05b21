# Source: https://github.com/argusswift/YOLOv4-pytorch/issues/247
"""YOLOv4-pytorch with `activate='relu'` as the default of CSPDarknet53's Convolutional: every
CSPBlock ends its block in `nn.ReLU(inplace=True)` and then adds the shortcut in place
(`out += residual`) to that ReLU output, which ReLU saved for its backward; the Trainer's
`loss.backward()` raises "one of the variables needed for gradient computation has been modified
by an inplace operation" (ReluBackward0). The reporter's fix is `out = out + residual`. The config,
the YOLO head/loss and the VOC loader are small stand-ins written here; tiny channels, 32x32 images.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class cfg:  # config/yolov4_config.py stand-in
    ATTENTION = {"TYPE": "NONE"}
    TRAIN = {"BATCH_SIZE": 2, "EPOCHS": 1, "LR_INIT": 1e-3, "MOMENTUM": 0.9, "WEIGHT_DECAY": 5e-4}
    DATA = {"NUM": 3}


class Mish(nn.Module):
    def __init__(self):
        super(Mish, self).__init__()

    def forward(self, x):
        return x * torch.tanh(F.softplus(x))


norm_name = {"bn": nn.BatchNorm2d}
activate_name = {
    "relu": nn.ReLU,
    "leaky": nn.LeakyReLU,
    "linear": nn.Identity(),
    "mish": Mish(),
}


class Convolutional(nn.Module):
    def __init__(self, filters_in, filters_out, kernel_size, stride=1, norm="bn", activate="relu"):
        super(Convolutional, self).__init__()
        self.norm = norm
        self.activate = activate
        self.__conv = nn.Conv2d(in_channels=filters_in, out_channels=filters_out,
                                kernel_size=kernel_size, stride=stride,
                                padding=kernel_size // 2, bias=not norm)
        if norm:
            assert norm in norm_name.keys()
            if norm == "bn":
                self.__norm = norm_name[norm](num_features=filters_out)
        if activate:
            assert activate in activate_name.keys()
            if activate == "leaky":
                self.__activate = activate_name[activate](negative_slope=0.1, inplace=True)
            if activate == "relu":
                self.__activate = activate_name[activate](inplace=True)
            if activate == "mish":
                self.__activate = activate_name[activate]

    def forward(self, x):
        x = self.__conv(x)
        if self.norm:
            x = self.__norm(x)
        if self.activate:
            x = self.__activate(x)
        return x


class CSPBlock(nn.Module):
    def __init__(self, in_channels, out_channels, hidden_channels=None, residual_activation="linear"):
        super(CSPBlock, self).__init__()
        if hidden_channels is None:
            hidden_channels = out_channels
        self.block = nn.Sequential(
            Convolutional(in_channels, hidden_channels, 1),
            Convolutional(hidden_channels, out_channels, 3),
        )
        self.activation = activate_name[residual_activation]
        self.attention = cfg.ATTENTION["TYPE"]
        if self.attention not in ("SEnet", "CBAM"):
            self.attention = None

    def forward(self, x):
        residual = x
        out = self.block(x)
        if self.attention is not None:
            out = self.attention_module(out)
        out += residual
        return out


class CSPFirstStage(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(CSPFirstStage, self).__init__()
        self.downsample_conv = Convolutional(in_channels, out_channels, 3, stride=2)
        self.split_conv0 = Convolutional(out_channels, out_channels, 1)
        self.split_conv1 = Convolutional(out_channels, out_channels, 1)
        self.blocks_conv = nn.Sequential(
            CSPBlock(out_channels, out_channels, in_channels),
            Convolutional(out_channels, out_channels, 1),
        )
        self.concat_conv = Convolutional(out_channels * 2, out_channels, 1)

    def forward(self, x):
        x = self.downsample_conv(x)
        x0 = self.split_conv0(x)
        x1 = self.split_conv1(x)
        x1 = self.blocks_conv(x1)
        x = torch.cat([x1, x0], dim=1)
        x = self.concat_conv(x)
        return x


class CSPStage(nn.Module):
    def __init__(self, in_channels, out_channels, num_blocks):
        super(CSPStage, self).__init__()
        self.downsample_conv = Convolutional(in_channels, out_channels, 3, stride=2)
        self.split_conv0 = Convolutional(out_channels, out_channels // 2, 1)
        self.split_conv1 = Convolutional(out_channels, out_channels // 2, 1)
        self.blocks_conv = nn.Sequential(
            *[CSPBlock(out_channels // 2, out_channels // 2) for _ in range(num_blocks)],
            Convolutional(out_channels // 2, out_channels // 2, 1)
        )
        self.concat_conv = Convolutional(out_channels, out_channels, 1)

    def forward(self, x):
        x = self.downsample_conv(x)
        x0 = self.split_conv0(x)
        x1 = self.split_conv1(x)
        x1 = self.blocks_conv(x1)
        x = torch.cat([x0, x1], dim=1)
        x = self.concat_conv(x)
        return x


class CSPDarknet53(nn.Module):
    def __init__(self, stem_channels=4, feature_channels=[8, 16, 32, 64, 128], num_features=3):
        super(CSPDarknet53, self).__init__()
        self.stem_conv = Convolutional(3, stem_channels, 3)
        self.stages = nn.ModuleList([
            CSPFirstStage(stem_channels, feature_channels[0]),
            CSPStage(feature_channels[0], feature_channels[1], 2),
            CSPStage(feature_channels[1], feature_channels[2], 8),
            CSPStage(feature_channels[2], feature_channels[3], 8),
            CSPStage(feature_channels[3], feature_channels[4], 4),
        ])
        self.feature_channels = feature_channels
        self.num_features = num_features
        self._initialize_weights()

    def forward(self, x):
        x = self.stem_conv(x)
        features = []
        for stage in self.stages:
            x = stage(x)
            features.append(x)
        return features[-self.num_features:]

    def _initialize_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.data.normal_(0, math.sqrt(2.0 / n))
                if m.bias is not None:
                    m.bias.data.zero_()
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.data.fill_(1)
                m.bias.data.zero_()


# ---- model/build_model.py + model/loss/yolo_loss.py stand-ins ----
class Build_Model(nn.Module):
    def __init__(self):
        super(Build_Model, self).__init__()
        self.backbone = CSPDarknet53()
        chans = self.backbone.feature_channels[-3:]
        self.heads = nn.ModuleList([nn.Conv2d(c, 3 * (5 + cfg.DATA["NUM"]), 1) for c in chans])

    def forward(self, x):
        feats = self.backbone(x)
        return [head(f) for head, f in zip(self.heads, feats)]


class YoloV4Loss(nn.Module):
    def forward(self, preds, targets):
        loss_obj = 0
        loss_cls = 0
        for p, t in zip(preds, targets):
            p = p.view(p.shape[0], 3, 5 + cfg.DATA["NUM"], p.shape[-2], p.shape[-1])
            loss_obj = loss_obj + F.binary_cross_entropy_with_logits(p[:, :, 4], t[:, :, 4])
            loss_cls = loss_cls + F.binary_cross_entropy_with_logits(p[:, :, 5:], t[:, :, 5:])
        loss = loss_obj + loss_cls
        return loss, loss_obj, loss_cls


def voc_batches(n=2, batch_size=2):
    for _ in range(n):
        imgs = torch.rand(batch_size, 3, 32, 32)
        targets = [(torch.rand(batch_size, 3, 5 + cfg.DATA["NUM"], s, s) > 0.8).float()
                   for s in (4, 2, 1)]
        yield imgs, targets


class Trainer(object):
    def __init__(self):
        self.yolov4 = Build_Model()
        self.optimizer = torch.optim.SGD(self.yolov4.parameters(), lr=cfg.TRAIN["LR_INIT"],
                                         momentum=cfg.TRAIN["MOMENTUM"],
                                         weight_decay=cfg.TRAIN["WEIGHT_DECAY"])
        self.criterion = YoloV4Loss()

    def train(self):
        for epoch in range(cfg.TRAIN["EPOCHS"]):
            self.yolov4.train()
            for i, (imgs, targets) in enumerate(voc_batches(batch_size=cfg.TRAIN["BATCH_SIZE"])):
                p = self.yolov4(imgs)
                loss, loss_obj, loss_cls = self.criterion(p, targets)
                loss.backward()  # expect: GG103
                self.optimizer.step()
                self.optimizer.zero_grad()
                print("epoch %d iter %d loss %.4f obj %.4f cls %.4f" % (
                    epoch, i, loss.item(), loss_obj.item(), loss_cls.item()))


if __name__ == "__main__":
    Trainer().train()
