# Source: https://github.com/fepegar/unet/pull/37
"""fepegar's `unet` package with `residual=True`, with this PR's fix: EncodingBlock and
DecodingBlock add the 1x1 shortcut out of place (`x = x + connection`), so the ReLU outputs that
conv2's blocks saved stay intact and the training step's backward runs. Package modules copied in
small form; training loop, data and Dice loss are small stand-ins.
"""
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

CHANNELS_DIMENSION = 1


# ---- unet/conv.py ----
class ConvolutionalBlock(nn.Module):
    def __init__(self, dimensions: int, in_channels: int, out_channels: int,
                 normalization: Optional[str] = None, kernel_size: int = 3,
                 activation: Optional[str] = 'ReLU', preactivation: bool = False,
                 padding: int = 0, padding_mode: str = 'zeros',
                 dilation: Optional[int] = None, dropout: float = 0):
        super().__init__()
        block = nn.ModuleList()
        dilation = 1 if dilation is None else dilation
        if padding:
            total_padding = kernel_size + 2 * (dilation - 1) - 1
            padding = total_padding // 2
        conv_class = getattr(nn, 'Conv{}d'.format(dimensions))
        conv_layer = conv_class(in_channels, out_channels, kernel_size, padding=padding,
                                padding_mode=padding_mode, dilation=dilation)
        norm_layer = None
        if normalization is not None:
            norm_class = getattr(nn, '{}Norm{}d'.format(normalization.capitalize(), dimensions))
            norm_layer = norm_class(in_channels if preactivation else out_channels)
        activation_layer = None
        if activation is not None:
            activation_layer = getattr(nn, activation)()
        if preactivation:
            self.add_if_not_none(block, norm_layer)
            self.add_if_not_none(block, activation_layer)
            self.add_if_not_none(block, conv_layer)
        else:
            self.add_if_not_none(block, conv_layer)
            self.add_if_not_none(block, norm_layer)
            self.add_if_not_none(block, activation_layer)
        self.conv_layer = conv_layer
        self.block = nn.Sequential(*block)

    def forward(self, x):
        return self.block(x)

    @staticmethod
    def add_if_not_none(module_list, module):
        if module is not None:
            module_list.append(module)


# ---- unet/encoding.py ----
class Encoder(nn.Module):
    def __init__(self, in_channels, out_channels_first, dimensions, pooling_type,
                 num_encoding_blocks, normalization, preactivation=False, residual=False,
                 padding=0, activation='ReLU'):
        super().__init__()
        self.encoding_blocks = nn.ModuleList()
        is_first_block = True
        for _ in range(num_encoding_blocks):
            encoding_block = EncodingBlock(in_channels, out_channels_first, dimensions,
                                           normalization, pooling_type, preactivation,
                                           is_first_block=is_first_block, residual=residual,
                                           padding=padding, activation=activation)
            is_first_block = False
            self.encoding_blocks.append(encoding_block)
            if dimensions == 2:
                in_channels = out_channels_first
                out_channels_first = in_channels * 2
            elif dimensions == 3:
                in_channels = 2 * out_channels_first
                out_channels_first = in_channels

    def forward(self, x):
        skip_connections = []
        for encoding_block in self.encoding_blocks:
            x, skip_connnection = encoding_block(x)
            skip_connections.append(skip_connnection)
        return skip_connections, x

    @property
    def out_channels(self):
        return self.encoding_blocks[-1].out_channels


class EncodingBlock(nn.Module):
    def __init__(self, in_channels, out_channels_first, dimensions, normalization,
                 pooling_type, preactivation=False, is_first_block=False, residual=False,
                 padding=0, activation='ReLU'):
        super().__init__()
        self.preactivation = preactivation
        self.normalization = normalization
        self.residual = residual
        if is_first_block:
            normalization = None
            preactivation = None
        else:
            normalization = self.normalization
            preactivation = self.preactivation
        self.conv1 = ConvolutionalBlock(dimensions, in_channels, out_channels_first,
                                        normalization=normalization, preactivation=preactivation,
                                        padding=padding, activation=activation)
        out_channels_second = out_channels_first if dimensions == 2 else 2 * out_channels_first
        self.conv2 = ConvolutionalBlock(dimensions, out_channels_first, out_channels_second,
                                        normalization=self.normalization,
                                        preactivation=self.preactivation,
                                        padding=padding, activation=activation)
        if residual:
            self.conv_residual = ConvolutionalBlock(dimensions, in_channels, out_channels_second,
                                                    kernel_size=1, normalization=None,
                                                    activation=None)
        self.downsample = None
        if pooling_type is not None:
            self.downsample = getattr(nn, '{}Pool{}d'.format(pooling_type.capitalize(), dimensions))(2)

    def forward(self, x):
        if self.residual:
            connection = self.conv_residual(x)
            x = self.conv1(x)
            x = self.conv2(x)
            x = x + connection
        else:
            x = self.conv1(x)
            x = self.conv2(x)
        if self.downsample is None:
            return x
        else:
            skip_connection = x
            x = self.downsample(x)
            return x, skip_connection

    @property
    def out_channels(self):
        return self.conv2.conv_layer.out_channels


# ---- unet/decoding.py ----
class Decoder(nn.Module):
    def __init__(self, in_channels_skip_connection, dimensions, upsampling_type,
                 num_decoding_blocks, normalization, preactivation=False, residual=False,
                 padding=0, activation='ReLU'):
        super().__init__()
        self.decoding_blocks = nn.ModuleList()
        for _ in range(num_decoding_blocks):
            decoding_block = DecodingBlock(in_channels_skip_connection, dimensions,
                                           upsampling_type, normalization=normalization,
                                           preactivation=preactivation, residual=residual,
                                           padding=padding, activation=activation)
            self.decoding_blocks.append(decoding_block)
            in_channels_skip_connection //= 2

    def forward(self, skip_connections, x):
        zipped = zip(reversed(skip_connections), self.decoding_blocks)
        for skip_connection, decoding_block in zipped:
            x = decoding_block(skip_connection, x)
        return x


class DecodingBlock(nn.Module):
    def __init__(self, in_channels_skip_connection, dimensions, upsampling_type, normalization,
                 preactivation=True, residual=False, padding=0, activation='ReLU'):
        super().__init__()
        self.residual = residual
        if upsampling_type == 'conv':
            in_channels = out_channels = 2 * in_channels_skip_connection
            conv_class = getattr(nn, f'ConvTranspose{dimensions}d')
            self.upsample = conv_class(in_channels, out_channels, kernel_size=2, stride=2)
        else:
            self.upsample = nn.Upsample(scale_factor=2, mode=upsampling_type)
        in_channels_first = in_channels_skip_connection * (1 + 2)
        out_channels = in_channels_skip_connection
        self.conv1 = ConvolutionalBlock(dimensions, in_channels_first, out_channels,
                                        normalization=normalization, preactivation=preactivation,
                                        padding=padding, activation=activation)
        self.conv2 = ConvolutionalBlock(dimensions, out_channels, out_channels,
                                        normalization=normalization, preactivation=preactivation,
                                        padding=padding, activation=activation)
        if residual:
            self.conv_residual = ConvolutionalBlock(dimensions, in_channels_first, out_channels,
                                                    kernel_size=1, normalization=None,
                                                    activation=None)

    def forward(self, skip_connection, x):
        x = self.upsample(x)
        skip_connection = self.center_crop(skip_connection, x)
        x = torch.cat((skip_connection, x), dim=CHANNELS_DIMENSION)
        if self.residual:
            connection = self.conv_residual(x)
            x = self.conv1(x)
            x = self.conv2(x)
            x = x + connection
        else:
            x = self.conv1(x)
            x = self.conv2(x)
        return x

    def center_crop(self, skip_connection, x):
        skip_shape = torch.tensor(skip_connection.shape)
        x_shape = torch.tensor(x.shape)
        crop = skip_shape[2:] - x_shape[2:]
        half_crop = crop // 2
        pad = -torch.stack((half_crop, half_crop)).t().flatten()
        return F.pad(skip_connection, pad.tolist())


# ---- unet/unet.py ----
class UNet(nn.Module):
    def __init__(self, in_channels=1, out_classes=2, dimensions=2, num_encoding_blocks=5,
                 out_channels_first_layer=64, normalization=None, pooling_type='max',
                 upsampling_type='conv', preactivation=False, residual=False, padding=0,
                 activation='ReLU'):
        super().__init__()
        depth = num_encoding_blocks - 1
        self.encoder = Encoder(in_channels, out_channels_first_layer, dimensions, pooling_type,
                               depth, normalization, preactivation=preactivation,
                               residual=residual, padding=padding, activation=activation)
        in_channels = self.encoder.out_channels
        out_channels_first = 2 * in_channels if dimensions == 2 else in_channels
        self.bottom_block = EncodingBlock(in_channels, out_channels_first, dimensions,
                                          normalization, pooling_type=None,
                                          preactivation=preactivation, residual=residual,
                                          padding=padding, activation=activation)
        power = depth - 1 if dimensions == 2 else depth
        in_channels_skip_connection = out_channels_first_layer * 2**power
        self.decoder = Decoder(in_channels_skip_connection, dimensions, upsampling_type, depth,
                               normalization, preactivation=preactivation, residual=residual,
                               padding=padding, activation=activation)
        in_channels = out_channels_first_layer if dimensions == 2 else 2 * out_channels_first_layer
        self.classifier = ConvolutionalBlock(dimensions, in_channels, out_classes,
                                             kernel_size=1, activation=None)

    def forward(self, x):
        skip_connections, encoding = self.encoder(x)
        encoding = self.bottom_block(encoding)
        x = self.decoder(skip_connections, encoding)
        return self.classifier(x)


# ---- training script stand-ins ----
def dice_loss(logits, target, eps=1e-6):
    probs = F.softmax(logits, dim=1)[:, 1]
    inter = (probs * target).sum()
    return 1 - (2 * inter + eps) / (probs.sum() + target.sum() + eps)


def batches(n=2, batch_size=2, size=16):
    for _ in range(n):
        image = torch.rand(batch_size, 1, size, size)
        target = (torch.rand(batch_size, size, size) > 0.5).float()
        yield image, target


def train():
    model = UNet(in_channels=1, out_classes=2, dimensions=2, num_encoding_blocks=3,
                 out_channels_first_layer=4, normalization='batch', upsampling_type='conv',
                 padding=1, residual=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    for step, (image, target) in enumerate(batches()):
        optimizer.zero_grad()
        logits = model(image)
        loss = dice_loss(logits, target)
        loss.backward()
        optimizer.step()
        print(step, loss.item())


if __name__ == "__main__":
    train()
