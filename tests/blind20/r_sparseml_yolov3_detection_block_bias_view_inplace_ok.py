# Source: https://github.com/neuralmagic/sparseml/pull/94
"""sparseml ``pytorch/models/detection/yolo_v3.py``: ``_YoloDetectionBlock.initialize`` performs
YOLO's "smart bias initialization" on the detector conv: ``b = self.conv.bias.view(3, -1)`` and
then ``b[:, 4] += ...`` / ``b[:, 5:] += ...`` before re-wrapping ``b`` in a new ``Parameter``.

``b`` is a view of ``self.conv.bias``, a leaf Parameter that requires grad, and the in-place
``+=`` on it runs with grad mode on, so since torch 1.8 building the model raises "a view of a leaf
Variable that requires grad is being used in an in-place operation" (the PR quotes the failing
test).  Fixed here with the PR's fix: ``b = self.conv.bias.view(3, -1).detach()`` -- the bias is replaced by a
new Parameter right after, so detaching loses nothing.

Reduced from the file: the same module structure (conv/BN/Hardswish blocks, SPP, upsample, three
YOLO conv stacks and detection blocks), channel widths divided by 32, a small stand-in DarkNet
backbone returning three feature maps, and a stand-in for sparseml's ``Hardswish``.  After the
model is built, one SGD step on a dummy objective over random 64x64 images.
"""
import math
from typing import List, Tuple, Union

import torch
from torch import Tensor, cat
from torch.nn import (
    BatchNorm2d,
    Conv2d,
    MaxPool2d,
    Module,
    ModuleList,
    Parameter,
    Upsample,
    init,
)

WIDTH_DIV = 32  # channel widths of the original model divided by this


class Hardswish(Module):
    def __init__(self, num_channels: int = -1, inplace: bool = False):
        super().__init__()
        self.num_channels = num_channels
        self.inplace = inplace

    def forward(self, inp: Tensor) -> Tensor:
        return torch.nn.functional.hardswish(inp, inplace=self.inplace)


def _init_conv(conv: Conv2d):
    init.kaiming_normal_(conv.weight, mode="fan_out", nonlinearity="relu")


def _init_batch_norm(norm: BatchNorm2d, weight_const: float = 1.0):
    init.constant_(norm.weight, weight_const)
    init.constant_(norm.bias, 0.0)


class _ConvBnBlock(Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1):
        super().__init__()

        self.conv = Conv2d(
            in_channels,
            out_channels,
            kernel_size=kernel_size,
            stride=stride,
            padding=kernel_size // 2,
            bias=False,
        )
        self.bn = BatchNorm2d(out_channels, momentum=0.03, eps=1e-4)
        self.act = Hardswish(num_channels=out_channels, inplace=True)

        self.initialize()

    def forward(self, inp: Tensor) -> Tensor:
        out = self.conv(inp)
        out = self.bn(out)
        out = self.act(out)

        return out

    def initialize(self):
        _init_conv(self.conv)
        _init_batch_norm(self.bn)


class _SPP(Module):
    def __init__(self):
        super().__init__()
        self.pool1 = MaxPool2d(kernel_size=5, stride=1, padding=2)  # pad = (k - 1) // 2
        self.pool2 = MaxPool2d(kernel_size=9, stride=1, padding=4)
        self.pool3 = MaxPool2d(kernel_size=13, stride=1, padding=6)

    def forward(self, inp: Tensor) -> Tensor:
        outputs = list()
        outputs.append(inp)
        outputs.append(self.pool1(inp))
        outputs.append(self.pool2(inp))
        outputs.append(self.pool3(inp))
        return cat(outputs, 1)


class _YoloConvsBlock(Module):
    def __init__(
        self,
        in_channels: int,
        out_channels_k1: int,
        out_channels_k3: int,
        total_layers: int,
        spp_layer_idxs: List[int] = None,
    ):
        super().__init__()

        # alterante between 1x1 and 3x3 convs
        # replace layers in spp_layer_idxs with SPP layers
        layers = []
        spp_layer_idxs = spp_layer_idxs or []
        for i in range(total_layers):
            if i not in spp_layer_idxs:
                kernel_size = 1 if i % 2 == 0 else 3
                out_channels = out_channels_k1 if kernel_size == 1 else out_channels_k3
                layers.append(_ConvBnBlock(in_channels, out_channels, kernel_size))
            else:
                out_channels = in_channels * 4
                layers.append(_SPP())
            in_channels = out_channels
        self.layers = ModuleList(layers)

    def forward(self, tens: Tensor) -> Tuple[Tensor, Tensor]:
        # Return output of all layers in sequence and second to last layer for routing
        for block in self.layers[:-1]:
            tens = block(tens)
        return self.layers[-1](tens), tens


class _UpsampleBlock(Module):
    def __init__(self, in_channels: int, out_channels: int, scale_factor: int = 2):
        super().__init__()

        self.conv = _ConvBnBlock(in_channels, out_channels, kernel_size=1)
        self.upsample = Upsample(scale_factor=scale_factor)

    def forward(self, inp: Tensor) -> Tensor:
        out = self.conv(inp)
        out = self.upsample(out)

        return out


class _YoloDetectionBlock(Module):
    def __init__(self, in_channels: int, num_classes: int, num_anchors: int):
        super().__init__()

        self.num_classes = num_classes
        self.num_anchors = num_anchors
        self.num_outputs_per_anchor = 5 + num_classes  # 4 bbox coords + 1 obj. score

        conv_out_channels = self.num_anchors * self.num_outputs_per_anchor
        self.conv = Conv2d(
            in_channels,
            conv_out_channels,
            kernel_size=1,
            stride=1,
            padding=0,
            bias=True,
        )
        self.initialize()

    def forward(self, inp: Tensor) -> Tensor:
        out = self.conv(inp)
        # reshape to (bs, anchor, feature, feature, outputs)
        bs, _, feat_y, feat_x = out.shape  # x(bs,255,20,20) to x(bs,3,20,20,85)
        out = (
            out.view(bs, self.num_anchors, self.num_outputs_per_anchor, feat_y, feat_x)
            .permute(0, 1, 3, 4, 2)
            .contiguous()
        )
        return out

    def initialize(self):
        _init_conv(self.conv)

        # smart bias initialization
        b = self.conv.bias.view(3, -1).detach()
        b[:, 4] += math.log(8 / 640 ** 2)
        b[:, 5:] += math.log(0.6 / (self.num_classes - 0.99))
        self.conv.bias = Parameter(b.view(-1), requires_grad=True)


class YoloV3(Module):
    def __init__(
        self,
        num_classes: int,
        backbone: Module,
        backbone_out_channels: List[int],
        anchor_groups: List[Tensor],
    ):
        super().__init__()
        self.num_classes = num_classes
        self.backbone = backbone

        assert len(backbone_out_channels) == 3  # only 3 supported for now
        d = WIDTH_DIV
        self.head = ModuleList(
            [
                _YoloConvsBlock(
                    in_channels=backbone_out_channels[0],
                    out_channels_k1=512 // d,
                    out_channels_k3=1024 // d,
                    total_layers=8,
                    spp_layer_idxs=[3],  # replace third conv with SPP
                ),
                _UpsampleBlock(in_channels=512 // d, out_channels=256 // d, scale_factor=2),
                _YoloConvsBlock(
                    in_channels=256 // d + backbone_out_channels[1],
                    out_channels_k1=256 // d,
                    out_channels_k3=512 // d,
                    total_layers=6,
                ),
                _UpsampleBlock(in_channels=256 // d, out_channels=128 // d, scale_factor=2),
                _YoloConvsBlock(
                    in_channels=128 // d + backbone_out_channels[2],
                    out_channels_k1=128 // d,
                    out_channels_k3=256 // d,
                    total_layers=6,
                ),
            ]
        )
        self.detector = ModuleList(
            [
                _YoloDetectionBlock(1024 // d, num_classes, 3),
                _YoloDetectionBlock(512 // d, num_classes, 3),
                _YoloDetectionBlock(256 // d, num_classes, 3),
            ]
        )
        self.anchor_groups = anchor_groups

    def forward(self, inp: Tensor):
        backbone_features = self.backbone(inp)

        # run yolo head
        backbone_feature_idx = 0  # track backbone output to use
        current_tens = None  # holds the latest output to be propagated through model
        detector_inputs = []

        for section in self.head:
            if isinstance(section, _YoloConvsBlock):
                section_input = (
                    backbone_features[backbone_feature_idx]
                    if current_tens is None
                    else cat([current_tens, backbone_features[backbone_feature_idx]], 1)
                )
                detector_input, current_tens = section(section_input)
                detector_inputs.append(detector_input)
                backbone_feature_idx += 1
            else:
                current_tens = section(current_tens)

        # run detector layers
        outputs = []
        for detector_input, detector_layer in zip(detector_inputs, self.detector):
            outputs.append(detector_layer(detector_input))

        return outputs


class _TinyDarkNet(Module):
    """Stand-in for sparseml's DarkNet-53 used as a YOLO backbone (outputs at strides 32/16/8)."""

    def __init__(self, d: int):
        super().__init__()
        self.stem = _ConvBnBlock(3, 64 // d, 3, stride=2)
        self.down = ModuleList([
            _ConvBnBlock(64 // d, 128 // d, 3, stride=2),
            _ConvBnBlock(128 // d, 256 // d, 3, stride=2),   # stride 8
            _ConvBnBlock(256 // d, 512 // d, 3, stride=2),   # stride 16
            _ConvBnBlock(512 // d, 1024 // d, 3, stride=2),  # stride 32
        ])

    def forward(self, inp: Tensor) -> List[Tensor]:
        x = self.stem(inp)
        feats = []
        for layer in self.down:
            x = layer(x)
            feats.append(x)
        return [feats[3], feats[2], feats[1]]


def yolo_v3(num_classes: int = 80, pretrained_backbone: Union[bool, str] = False) -> YoloV3:
    d = WIDTH_DIV
    backbone = _TinyDarkNet(d)
    backbone_out_channels = [1024 // d, 512 // d, 256 // d]
    anchor_groups = [
        Tensor([[116, 90], [156, 198], [373, 326]]),
        Tensor([[30, 61], [62, 45], [59, 119]]),
        Tensor([[10, 13], [16, 30], [33, 23]]),
    ]
    return YoloV3(num_classes, backbone, backbone_out_channels, anchor_groups)


torch.manual_seed(0)
model = yolo_v3(num_classes=3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
images = torch.rand(2, 3, 64, 64)
outputs = model(images)
loss = sum(out[..., 4].sigmoid().mean() for out in outputs)
optimizer.zero_grad()
loss.backward()
optimizer.step()
print([tuple(o.shape) for o in outputs], float(loss))
