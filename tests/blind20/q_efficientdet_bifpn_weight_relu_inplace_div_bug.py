# Source: https://github.com/tristandb/EfficientDet-PyTorch/issues/7
"""EfficientDet-PyTorch (tristandb), bifpn.py: `BiFPNBlock.forward` builds its fast-fusion
weights as

    w1 = self.w1_relu(self.w1)
    w1 /= torch.sum(w1, dim=0) + self.epsilon

`nn.ReLU` saves its output for the backward, and `/=` divides that very output in place, so
`loss.backward()` in train.py raises "one of the variables needed for gradient computation has
been modified by an inplace operation: [torch.FloatTensor [3, 4]], which is output 0 of
ReluBackward0, is at version 1; expected version 0" (the issue's [3, 4] tensor is a `w2`).
The reporter found it by narrowing the error down to
the BiFPN after `inplace=False` elsewhere did not help.

Fix (in the _ok twin, as in the thread): normalise out of place,
`w1 = w1 / (torch.sum(w1, dim=0) + self.epsilon)` (same for w2).

Stand-ins: a three-stage conv backbone in place of EfficientNet-B0 (c3, c4, c5 features), a
simplified FocalLoss (BCE on the sigmoid scores plus smooth-L1 on the box regressions against
random targets), random images, CPU, tiny sizes; the fusion weights start at ones (the repository
leaves `torch.Tensor(2, 4)` uninitialised). BiFPN, the heads and the training loop keep the
repository's structure.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


# ---- bifpn.py ----
class DepthwiseConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=1, stride=1, padding=0, dilation=1, freeze_bn=False):
        super(DepthwiseConvBlock, self).__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size, stride,
                                   padding, dilation, groups=in_channels, bias=False)
        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1,
                                   stride=1, padding=0, dilation=1, groups=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels, momentum=0.9997, eps=4e-5)
        self.act = nn.ReLU()

    def forward(self, inputs):
        x = self.depthwise(inputs)
        x = self.pointwise(x)
        x = self.bn(x)
        return self.act(x)


class ConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=1, stride=1, padding=0, dilation=1, freeze_bn=False):
        super(ConvBlock, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.bn = nn.BatchNorm2d(out_channels, momentum=0.9997, eps=4e-5)
        self.act = nn.ReLU()

    def forward(self, inputs):
        x = self.conv(inputs)
        x = self.bn(x)
        return self.act(x)


class BiFPNBlock(nn.Module):
    def __init__(self, feature_size=64, epsilon=0.0001):
        super(BiFPNBlock, self).__init__()
        self.epsilon = epsilon

        self.p3_td = DepthwiseConvBlock(feature_size, feature_size)
        self.p4_td = DepthwiseConvBlock(feature_size, feature_size)
        self.p5_td = DepthwiseConvBlock(feature_size, feature_size)
        self.p6_td = DepthwiseConvBlock(feature_size, feature_size)

        self.p4_out = DepthwiseConvBlock(feature_size, feature_size)
        self.p5_out = DepthwiseConvBlock(feature_size, feature_size)
        self.p6_out = DepthwiseConvBlock(feature_size, feature_size)
        self.p7_out = DepthwiseConvBlock(feature_size, feature_size)

        self.w1 = nn.Parameter(torch.ones(2, 4))
        self.w1_relu = nn.ReLU()
        self.w2 = nn.Parameter(torch.ones(3, 4))
        self.w2_relu = nn.ReLU()

    def forward(self, inputs):
        p3_x, p4_x, p5_x, p6_x, p7_x = inputs

        # Calculate Top-Down Pathway
        w1 = self.w1_relu(self.w1)
        w1 /= torch.sum(w1, dim=0) + self.epsilon
        w2 = self.w2_relu(self.w2)
        w2 /= torch.sum(w2, dim=0) + self.epsilon

        p7_td = p7_x
        p6_td = self.p6_td(w1[0, 0] * p6_x + w1[1, 0] * F.interpolate(p7_td, scale_factor=2))
        p5_td = self.p5_td(w1[0, 1] * p5_x + w1[1, 1] * F.interpolate(p6_td, scale_factor=2))
        p4_td = self.p4_td(w1[0, 2] * p4_x + w1[1, 2] * F.interpolate(p5_td, scale_factor=2))
        p3_td = self.p3_td(w1[0, 3] * p3_x + w1[1, 3] * F.interpolate(p4_td, scale_factor=2))

        # Calculate Bottom-Up Pathway
        p3_out = p3_td
        p4_out = self.p4_out(w2[0, 0] * p4_x + w2[1, 0] * p4_td + w2[2, 0] * nn.Upsample(scale_factor=0.5)(p3_out))
        p5_out = self.p5_out(w2[0, 1] * p5_x + w2[1, 1] * p5_td + w2[2, 1] * nn.Upsample(scale_factor=0.5)(p4_out))
        p6_out = self.p6_out(w2[0, 2] * p6_x + w2[1, 2] * p6_td + w2[2, 2] * nn.Upsample(scale_factor=0.5)(p5_out))
        p7_out = self.p7_out(w2[0, 3] * p7_x + w2[1, 3] * p7_td + w2[2, 3] * nn.Upsample(scale_factor=0.5)(p6_out))

        return [p3_out, p4_out, p5_out, p6_out, p7_out]


class BiFPN(nn.Module):
    def __init__(self, size, feature_size=64, num_layers=2, epsilon=0.0001):
        super(BiFPN, self).__init__()
        self.p3 = nn.Conv2d(size[0], feature_size, kernel_size=1, stride=1, padding=0)
        self.p4 = nn.Conv2d(size[1], feature_size, kernel_size=1, stride=1, padding=0)
        self.p5 = nn.Conv2d(size[2], feature_size, kernel_size=1, stride=1, padding=0)
        self.p6 = nn.Conv2d(size[2], feature_size, kernel_size=3, stride=2, padding=1)
        self.p7 = ConvBlock(feature_size, feature_size, kernel_size=3, stride=2, padding=1)

        bifpns = []
        for _ in range(num_layers):
            bifpns.append(BiFPNBlock(feature_size))
        self.bifpn = nn.Sequential(*bifpns)

    def forward(self, inputs):
        c3, c4, c5 = inputs
        p3_x = self.p3(c3)
        p4_x = self.p4(c4)
        p5_x = self.p5(c5)
        p6_x = self.p6(c5)
        p7_x = self.p7(p6_x)
        features = [p3_x, p4_x, p5_x, p6_x, p7_x]
        return self.bifpn(features)


# ---- efficientdet.py ----
class RegressionModel(nn.Module):
    def __init__(self, num_features_in, d_class=3, num_anchors=9, feature_size=64):
        super(RegressionModel, self).__init__()
        prediction_net = []
        for _ in range(d_class):
            prediction_net.append(nn.Conv2d(num_features_in, feature_size, kernel_size=3, padding=1))
            prediction_net.append(nn.ReLU())
            num_features_in = feature_size
        self.prediction_net = nn.Sequential(*prediction_net)
        self.output = nn.Conv2d(feature_size, num_anchors * 4, kernel_size=3, padding=1)

    def forward(self, x):
        out = self.prediction_net(x)
        out = self.output(out)
        out = out.permute(0, 2, 3, 1)
        return out.contiguous().view(out.shape[0], -1, 4)


class ClassificationModel(nn.Module):
    def __init__(self, num_features_in, num_anchors=9, d_class=3, num_classes=80, prior=0.01, feature_size=64):
        super(ClassificationModel, self).__init__()
        self.num_classes = num_classes
        self.num_anchors = num_anchors
        classification_net = []
        for _ in range(d_class):
            classification_net.append(nn.Conv2d(num_features_in, feature_size, kernel_size=3, padding=1))
            classification_net.append(nn.ReLU())
            num_features_in = feature_size
        self.classification_net = nn.Sequential(*classification_net)
        self.output = nn.Conv2d(feature_size, num_anchors * num_classes, kernel_size=3, padding=1)
        self.output_act = nn.Sigmoid()

    def forward(self, x):
        out = self.classification_net(x)
        out = self.output(out)
        out = self.output_act(out)
        out1 = out.permute(0, 2, 3, 1)
        batch_size, width, height, channels = out1.shape
        out2 = out1.view(batch_size, width, height, self.num_anchors, self.num_classes)
        return out2.contiguous().view(x.shape[0], -1, self.num_classes)


class FocalLoss(nn.Module):
    """Simplified stand-in for losses.FocalLoss (no anchor matching)."""
    def forward(self, classifications, regressions, annotations):
        cls_target, reg_target = annotations
        classification_loss = F.binary_cross_entropy(classifications.clamp(1e-4, 1 - 1e-4), cls_target)
        regression_loss = F.smooth_l1_loss(regressions, reg_target)
        return classification_loss, regression_loss


class EfficientDet(nn.Module):
    def __init__(self, num_classes, feature_size=16, num_layers=2, d_class=2):
        super(EfficientDet, self).__init__()
        fpn_sizes = [8, 12, 16]
        # stand-in for the EfficientNet blocks up to stride 32
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.Conv2d(8, 8, 3, 2, 1), nn.ReLU())
        self.stage3 = nn.Sequential(nn.Conv2d(8, fpn_sizes[0], 3, 2, 1), nn.ReLU())
        self.stage4 = nn.Sequential(nn.Conv2d(fpn_sizes[0], fpn_sizes[1], 3, 2, 1), nn.ReLU())
        self.stage5 = nn.Sequential(nn.Conv2d(fpn_sizes[1], fpn_sizes[2], 3, 2, 1), nn.ReLU())
        self.fpn = BiFPN(fpn_sizes, feature_size=feature_size, num_layers=num_layers)
        self.regressionModel = RegressionModel(feature_size, feature_size=feature_size, d_class=d_class)
        self.classificationModel = ClassificationModel(feature_size, feature_size=feature_size, d_class=d_class,
                                                       num_classes=num_classes)
        self.focalLoss = FocalLoss()

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.data.normal_(0, math.sqrt(2. / n))
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.data.fill_(1)
                m.bias.data.zero_()
        prior = 0.01
        self.classificationModel.output.weight.data.fill_(0)
        self.classificationModel.output.bias.data.fill_(-math.log((1.0 - prior) / prior))
        self.regressionModel.output.weight.data.fill_(0)
        self.regressionModel.output.bias.data.fill_(0)

    def forward(self, inputs):
        img_batch, annotations = inputs
        x = self.stem(img_batch)
        c3 = self.stage3(x)
        c4 = self.stage4(c3)
        c5 = self.stage5(c4)
        features = self.fpn([c3, c4, c5])
        regression = torch.cat([self.regressionModel(feature) for feature in features], dim=1)
        classification = torch.cat([self.classificationModel(feature) for feature in features], dim=1)
        return self.focalLoss(classification, regression, annotations)


# ---- train.py ----
def main(epochs=2, batches=2, num_classes=3):
    torch.manual_seed(0)
    model = EfficientDet(num_classes=num_classes)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=3)
    loss_hist = []
    # 128x128 images: P3..P7 are 16, 8, 4, 2, 1 pixels wide
    n_anchors = 9 * (16 * 16 + 8 * 8 + 4 * 4 + 2 * 2 + 1)
    dataloader_train = [{'img': torch.rand(2, 3, 128, 128),
                         'annot': ((torch.rand(2, n_anchors, num_classes) > 0.9).float(),
                                   torch.randn(2, n_anchors, 4))} for _ in range(batches)]

    for epoch_num in range(epochs):
        model.train()
        epoch_loss = []
        for iter_num, data in enumerate(dataloader_train):
            optimizer.zero_grad()

            classification_loss, regression_loss = model([data['img'].float(), data['annot']])

            classification_loss = classification_loss.mean()
            regression_loss = regression_loss.mean()

            loss = classification_loss + regression_loss

            if bool(loss == 0):
                continue

            loss.backward()  # expect: GG103

            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)

            optimizer.step()

            loss_hist.append(float(loss))
            epoch_loss.append(float(loss))
            print('Epoch: {} | Iteration: {} | Running loss: {:1.5f}'.format(epoch_num, iter_num, np.mean(loss_hist)))

            del classification_loss
            del regression_loss

        scheduler.step(np.mean(epoch_loss))


if __name__ == '__main__':
    main()
