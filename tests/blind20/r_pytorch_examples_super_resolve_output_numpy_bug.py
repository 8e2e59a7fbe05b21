# Source: https://github.com/pytorch/examples/pull/354
"""pytorch/examples ``super_resolution/super_resolve.py``: load the trained sub-pixel CNN, run it
on the Y channel of an image and turn the output back into an image.

The script runs the model outside ``torch.no_grad()``, so ``out`` is produced from the model's
parameters and requires grad; ``out[0].numpy()`` then raises "Can't call numpy() on Tensor that
requires grad" (since PyTorch 0.4, when Variable and Tensor merged).  The PR's fix:
``out[0].detach().numpy()``.

Stand-ins: the model is built in place of ``torch.load(opt.model)`` (super_resolution/model.py's
``Net``), a small PIL-like ``Image`` for the YCbCr image (random 24x24 data), the arguments are
parsed from a fixed list, and nothing is written.
"""
from __future__ import print_function
import argparse
import torch
import torch.nn as nn
import torch.nn.init as init

import numpy as np


# ---- super_resolution/model.py ----
class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()

        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(64, 64, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(32, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


# ---- stand-ins for PIL.Image and torchvision.transforms.ToTensor ----
class _Img:
    def __init__(self, arr):
        self.arr = arr
        self.size = (arr.shape[1], arr.shape[0])

    def convert(self, mode):
        return self

    def split(self):
        return tuple(_Img(self.arr[..., c]) for c in range(self.arr.shape[-1]))

    def resize(self, size, resample=None):
        reps = (size[1] // self.arr.shape[0], size[0] // self.arr.shape[1])
        return _Img(np.kron(self.arr, np.ones(reps, dtype=self.arr.dtype)))

    def save(self, filename):
        pass


class Image:
    BICUBIC = 3

    @staticmethod
    def open(path):
        rng = np.random.RandomState(0)
        return _Img(rng.randint(0, 256, size=(24, 24, 3)).astype(np.uint8))

    @staticmethod
    def fromarray(arr, mode=None):
        return _Img(arr)

    @staticmethod
    def merge(mode, bands):
        return _Img(np.stack([b.arr for b in bands], axis=-1))


class ToTensor:
    def __call__(self, pic):
        return torch.from_numpy(pic.arr.astype(np.float32) / 255.0)


# Training settings
parser = argparse.ArgumentParser(description='PyTorch Super Res Example')
parser.add_argument('--input_image', type=str, required=True, help='input image to use')
parser.add_argument('--model', type=str, required=True, help='model file to use')
parser.add_argument('--output_filename', type=str, help='where to save the output image')
parser.add_argument('--cuda', action='store_true', help='use cuda')
opt = parser.parse_args(['--input_image', 'leaves.jpg', '--model', 'model_epoch_500.pth',
                         '--output_filename', 'out.png'])

print(opt)
img = Image.open(opt.input_image).convert('YCbCr')
y, cb, cr = img.split()

torch.manual_seed(0)
model = Net(upscale_factor=3)  # stands for torch.load(opt.model)
img_to_tensor = ToTensor()
input = img_to_tensor(y).view(1, -1, y.size[1], y.size[0])

if opt.cuda:
    model = model.cuda()
    input = input.cuda()

out = model(input)
out = out.cpu()
out_img_y = out[0].numpy()  # expect: GG107
out_img_y *= 255.0
out_img_y = out_img_y.clip(0, 255)
out_img_y = Image.fromarray(np.uint8(out_img_y[0]), mode='L')

out_img_cb = cb.resize(out_img_y.size, Image.BICUBIC)
out_img_cr = cr.resize(out_img_y.size, Image.BICUBIC)
out_img = Image.merge('YCbCr', [out_img_y, out_img_cb, out_img_cr]).convert('RGB')

out_img.save(opt.output_filename)
print('output image saved to ', opt.output_filename)
