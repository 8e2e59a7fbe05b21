# Source: https://github.com/pytorch/audio/pull/1993
"""torchaudio's WaveRNN UpsampleNetwork initialises each upsampling Conv2d as a moving average with
`conv.weight.data.fill_(1. / (scale * 2 + 1))`. The PR set out to drop the legacy `.data` and
wrote `conv.weight.fill_(...)`: an in-place write into the Conv2d's weight, a leaf that requires
grad, with grad mode on, so constructing the model raises. The network is the repository's
(MelResNet, Stretch2d, UpsampleNetwork) at tiny sizes, run once on a random spectrogram."""
from typing import List, Tuple

import torch
from torch import Tensor
from torch import nn


class ResBlock(nn.Module):
    def __init__(self, n_freq: int = 128) -> None:
        super().__init__()
        self.resblock_model = nn.Sequential(
            nn.Conv1d(in_channels=n_freq, out_channels=n_freq, kernel_size=1, bias=False),
            nn.BatchNorm1d(n_freq),
            nn.ReLU(inplace=True),
            nn.Conv1d(in_channels=n_freq, out_channels=n_freq, kernel_size=1, bias=False),
            nn.BatchNorm1d(n_freq)
        )

    def forward(self, specgram: Tensor) -> Tensor:
        return self.resblock_model(specgram) + specgram


class MelResNet(nn.Module):
    def __init__(self, n_res_block: int = 10, n_freq: int = 128, n_hidden: int = 128,
                 n_output: int = 128, kernel_size: int = 5) -> None:
        super().__init__()
        ResBlocks = [ResBlock(n_hidden) for _ in range(n_res_block)]
        self.melresnet_model = nn.Sequential(
            nn.Conv1d(in_channels=n_freq, out_channels=n_hidden, kernel_size=kernel_size, bias=False),
            nn.BatchNorm1d(n_hidden),
            nn.ReLU(inplace=True),
            *ResBlocks,
            nn.Conv1d(in_channels=n_hidden, out_channels=n_output, kernel_size=1)
        )

    def forward(self, specgram: Tensor) -> Tensor:
        return self.melresnet_model(specgram)


class Stretch2d(nn.Module):
    def __init__(self, time_scale: int, freq_scale: int) -> None:
        super().__init__()
        self.freq_scale = freq_scale
        self.time_scale = time_scale

    def forward(self, specgram: Tensor) -> Tensor:
        return specgram.repeat_interleave(self.freq_scale, -2).repeat_interleave(self.time_scale, -1)


class UpsampleNetwork(nn.Module):
    def __init__(self, upsample_scales: List[int], n_res_block: int = 10, n_freq: int = 128,
                 n_hidden: int = 128, n_output: int = 128, kernel_size: int = 5) -> None:
        super().__init__()

        total_scale = 1
        for upsample_scale in upsample_scales:
            total_scale *= upsample_scale
        self.total_scale: int = total_scale

        self.indent = (kernel_size - 1) // 2 * total_scale
        self.resnet = MelResNet(n_res_block, n_freq, n_hidden, n_output, kernel_size)
        self.resnet_stretch = Stretch2d(total_scale, 1)

        up_layers = []
        for scale in upsample_scales:
            stretch = Stretch2d(scale, 1)
            conv = nn.Conv2d(in_channels=1,
                             out_channels=1,
                             kernel_size=(1, scale * 2 + 1),
                             padding=(0, scale),
                             bias=False)
            conv.weight.fill_(1. / (scale * 2 + 1))  # expect: GG108
            up_layers.append(stretch)
            up_layers.append(conv)
        self.upsample_layers = nn.Sequential(*up_layers)

    def forward(self, specgram: Tensor) -> Tuple[Tensor, Tensor]:
        resnet_output = self.resnet(specgram).unsqueeze(1)
        resnet_output = self.resnet_stretch(resnet_output)
        resnet_output = resnet_output.squeeze(1)

        specgram = specgram.unsqueeze(1)
        upsampling_output = self.upsample_layers(specgram)
        upsampling_output = upsampling_output.squeeze(1)[:, :, self.indent:-self.indent]

        return upsampling_output, resnet_output


upsamplenetwork = UpsampleNetwork(upsample_scales=[2, 2], n_res_block=2, n_freq=8, n_hidden=8,
                                  n_output=8)
specgram = torch.rand(2, 8, 10)
upsampling_output, resnet_output = upsamplenetwork(specgram)
print(upsampling_output.shape, resnet_output.shape)
