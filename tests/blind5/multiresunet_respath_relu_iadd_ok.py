# Source: https://github.com/j-sripad/mulitresunet-pytorch/issues/3
"""The repository's MultiResUNet with the fix the issue gave: the shortcuts are added out of
place (`x = x + shortcut` in Respath, `x = x + temp` in Multiresblock), so the ReLU outputs that
autograd saved keep their values. The model is the repository's, with 4 base filters; random
32x32 images and masks with a BCE loss stand in for the reporter's data."""
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class Multiresblock(nn.Module):
    def __init__(self, input_features: int, corresponding_unet_filters: int, alpha: float = 1.67) -> None:
        super().__init__()
        self.corresponding_unet_filters = corresponding_unet_filters
        self.alpha = alpha
        self.W = corresponding_unet_filters * alpha
        self.conv2d_bn_1x1 = Conv2d_batchnorm(input_features=input_features,
                                              num_of_filters=int(self.W*0.167)+int(self.W*0.333)+int(self.W*0.5),
                                              kernel_size=(1, 1), activation='None', padding=0)
        self.conv2d_bn_3x3 = Conv2d_batchnorm(input_features=input_features, num_of_filters=int(self.W*0.167),
                                              kernel_size=(3, 3), activation='relu', padding=1)
        self.conv2d_bn_5x5 = Conv2d_batchnorm(input_features=int(self.W*0.167), num_of_filters=int(self.W*0.333),
                                              kernel_size=(3, 3), activation='relu', padding=1)
        self.conv2d_bn_7x7 = Conv2d_batchnorm(input_features=int(self.W*0.333), num_of_filters=int(self.W*0.5),
                                              kernel_size=(3, 3), activation='relu', padding=1)
        self.batch_norm1 = nn.BatchNorm2d(int(self.W*0.5)+int(self.W*0.167)+int(self.W*0.333), affine=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        temp = self.conv2d_bn_1x1(x)
        a = self.conv2d_bn_3x3(x)
        b = self.conv2d_bn_5x5(a)
        c = self.conv2d_bn_7x7(b)
        x = torch.cat([a, b, c], axis=1)
        x = self.batch_norm1(x)
        x = x + temp
        x = self.batch_norm1(x)
        return x


class Conv2d_batchnorm(nn.Module):
    def __init__(self, input_features: int, num_of_filters: int, kernel_size: Tuple = (2, 2),
                 stride: Tuple = (1, 1), activation: str = 'relu', padding: int = 0) -> None:
        super().__init__()
        self.activation = activation
        self.conv1 = nn.Conv2d(in_channels=input_features, out_channels=num_of_filters, kernel_size=kernel_size,
                               stride=stride, padding=padding)
        self.batchnorm = nn.BatchNorm2d(num_of_filters, affine=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv1(x)
        x = self.batchnorm(x)
        if self.activation == 'relu':
            return F.relu(x)
        else:
            return x


class Respath(nn.Module):
    def __init__(self, input_features: int, filters: int, respath_length: int) -> None:
        super().__init__()
        self.filters = filters
        self.respath_length = respath_length
        self.conv2d_bn_1x1 = Conv2d_batchnorm(input_features=input_features, num_of_filters=self.filters,
                                              kernel_size=(1, 1), activation='None', padding=0)
        self.conv2d_bn_3x3 = Conv2d_batchnorm(input_features=input_features, num_of_filters=self.filters,
                                              kernel_size=(3, 3), activation='relu', padding=1)
        self.conv2d_bn_1x1_common = Conv2d_batchnorm(input_features=self.filters, num_of_filters=self.filters,
                                                     kernel_size=(1, 1), activation='None', padding=0)
        self.conv2d_bn_3x3_common = Conv2d_batchnorm(input_features=self.filters, num_of_filters=self.filters,
                                                     kernel_size=(3, 3), activation='relu', padding=1)
        self.batch_norm1 = nn.BatchNorm2d(filters, affine=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shortcut = self.conv2d_bn_1x1(x)
        x = self.conv2d_bn_3x3(x)
        x = x + shortcut
        x = F.relu(x)
        x = self.batch_norm1(x)
        if self.respath_length > 1:
            for i in range(self.respath_length):
                shortcut = self.conv2d_bn_1x1_common(x)
                x = self.conv2d_bn_3x3_common(x)
                x = x + shortcut
                x = F.relu(x)
                x = self.batch_norm1(x)
            return x
        else:
            return x


def block_width(filters, alpha=1.67):
    return int(filters*alpha*0.5)+int(filters*alpha*0.167)+int(filters*alpha*0.333)


class MultiResUnet(nn.Module):
    def __init__(self, channels: int, filters: int = 32, nclasses: int = 1) -> None:
        super().__init__()
        self.filters = filters
        self.nclasses = nclasses
        f = filters
        self.multiresblock1 = Multiresblock(input_features=channels, corresponding_unet_filters=f)
        self.pool1 = nn.MaxPool2d(2, stride=2)
        self.respath1 = Respath(input_features=block_width(f), filters=f, respath_length=4)
        self.multiresblock2 = Multiresblock(input_features=block_width(f), corresponding_unet_filters=f*2)
        self.pool2 = nn.MaxPool2d(2, 2)
        self.respath2 = Respath(input_features=block_width(f*2), filters=f*2, respath_length=3)
        self.multiresblock3 = Multiresblock(input_features=block_width(f*2), corresponding_unet_filters=f*4)
        self.pool3 = nn.MaxPool2d(2, 2)
        self.respath3 = Respath(input_features=block_width(f*4), filters=f*4, respath_length=2)
        self.multiresblock4 = Multiresblock(input_features=block_width(f*4), corresponding_unet_filters=f*8)
        self.pool4 = nn.MaxPool2d(2, 2)
        self.respath4 = Respath(input_features=block_width(f*8), filters=f*8, respath_length=1)
        self.multiresblock5 = Multiresblock(input_features=block_width(f*8), corresponding_unet_filters=f*16)
        # Decoder path
        self.upsample6 = nn.ConvTranspose2d(block_width(f*16), f*8, kernel_size=(2, 2), stride=(2, 2))
        self.multiresblock6 = Multiresblock(input_features=f*8+f*8, corresponding_unet_filters=f*8)
        self.upsample7 = nn.ConvTranspose2d(block_width(f*8), f*4, kernel_size=(2, 2), stride=(2, 2))
        self.multiresblock7 = Multiresblock(input_features=f*4+f*4, corresponding_unet_filters=f*4)
        self.upsample8 = nn.ConvTranspose2d(block_width(f*4), f*2, kernel_size=(2, 2), stride=(2, 2))
        self.multiresblock8 = Multiresblock(input_features=f*2+f*2, corresponding_unet_filters=f*2)
        self.upsample9 = nn.ConvTranspose2d(block_width(f*2), f, kernel_size=(2, 2), stride=(2, 2))
        self.multiresblock9 = Multiresblock(input_features=f+f, corresponding_unet_filters=f)
        self.conv_final = Conv2d_batchnorm(input_features=block_width(f), num_of_filters=self.nclasses,
                                           kernel_size=(1, 1), activation='None')

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_multires1 = self.multiresblock1(x)
        x_pool1 = self.pool1(x_multires1)
        x_multires1 = self.respath1(x_multires1)
        x_multires2 = self.multiresblock2(x_pool1)
        x_pool2 = self.pool2(x_multires2)
        x_multires2 = self.respath2(x_multires2)
        x_multires3 = self.multiresblock3(x_pool2)
        x_pool3 = self.pool3(x_multires3)
        x_multires3 = self.respath3(x_multires3)
        x_multires4 = self.multiresblock4(x_pool3)
        x_pool4 = self.pool4(x_multires4)
        x_multires4 = self.respath4(x_multires4)
        x_multires5 = self.multiresblock5(x_pool4)
        up6 = torch.cat([self.upsample6(x_multires5), x_multires4], axis=1)
        x_multires6 = self.multiresblock6(up6)
        up7 = torch.cat([self.upsample7(x_multires6), x_multires3], axis=1)
        x_multires7 = self.multiresblock7(up7)
        up8 = torch.cat([self.upsample8(x_multires7), x_multires2], axis=1)
        x_multires8 = self.multiresblock8(up8)
        up9 = torch.cat([self.upsample9(x_multires8), x_multires1], axis=1)
        x_multires9 = self.multiresblock9(up9)
        if self.nclasses > 1:
            conv_final_layer = self.conv_final(x_multires9)
        else:
            conv_final_layer = torch.sigmoid(self.conv_final(x_multires9))
        return conv_final_layer


model = MultiResUnet(channels=3, filters=4, nclasses=1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.BCELoss()
for epoch in range(2):
    images = torch.randn(2, 3, 32, 32)
    masks = (torch.rand(2, 1, 32, 32) > 0.5).float()
    optimizer.zero_grad()
    preds = model(images)
    loss = criterion(preds, masks)
    loss.backward()
    optimizer.step()
