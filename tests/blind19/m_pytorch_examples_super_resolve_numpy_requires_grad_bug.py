# Source: https://github.com/pytorch/examples/commit/6a0d6439e74fadde46042fb5958a0aeb0ed3ebc9
"""pytorch/examples super_resolution (before commit 6a0d643): train the ESPCN
`Net`, then run super_resolve.py on an image.

super_resolve.py runs `out = model(input)` outside `torch.no_grad()`, so the
output carries the graph of the model's parameters; after `out = out.cpu()` it
calls `out[0].numpy()`: "Can't call numpy() on Tensor that requires grad. Use
tensor.detach().numpy() instead."

The commit changes it to `out[0].detach().numpy()`.  PIL / torchvision are
replaced by small numpy stand-ins (YCbCr split, ToTensor, resize, merge); the
training part follows super_resolution/main.py with random data.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.init as init
import torch.optim as optim


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


# --- small stand-ins for PIL.Image / torchvision.transforms.ToTensor ---------
class GrayImage(object):
    def __init__(self, arr):
        self.arr = arr  # uint8 HxW

    @property
    def size(self):
        return (self.arr.shape[1], self.arr.shape[0])  # (width, height)

    def resize(self, size):
        w, h = size
        rows = (np.arange(h) * self.arr.shape[0] // h)
        cols = (np.arange(w) * self.arr.shape[1] // w)
        return GrayImage(self.arr[rows][:, cols])


def split_ycbcr(rgb):
    r, g, b = [rgb[..., i].astype(np.float32) for i in range(3)]
    y = 0.299 * r + 0.587 * g + 0.114 * b
    cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b
    cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b
    return [GrayImage(np.uint8(np.clip(c, 0, 255))) for c in (y, cb, cr)]


def merge_ycbcr_to_rgb(y, cb, cr):
    y, cb, cr = [c.arr.astype(np.float32) for c in (y, cb, cr)]
    r = y + 1.402 * (cr - 128)
    g = y - 0.344136 * (cb - 128) - 0.714136 * (cr - 128)
    b = y + 1.772 * (cb - 128)
    return np.uint8(np.clip(np.stack([r, g, b], -1), 0, 255))


class ToTensor(object):
    def __call__(self, pic):
        return torch.from_numpy(pic.arr.astype(np.float32) / 255.0).unsqueeze(0)


# --- main.py (training) --------------------------------------------------------
def train(model, criterion, optimizer, training_data_loader, epoch):
    epoch_loss = 0
    for iteration, batch in enumerate(training_data_loader, 1):
        input, target = batch[0], batch[1]

        optimizer.zero_grad()
        loss = criterion(model(input), target)
        epoch_loss += loss.item()
        loss.backward()
        optimizer.step()

    print("===> Epoch {} Complete: Avg. Loss: {:.4f}".format(epoch, epoch_loss / len(training_data_loader)))


# --- super_resolve.py ------------------------------------------------------------
def super_resolve(model, rgb):
    y, cb, cr = split_ycbcr(rgb)

    img_to_tensor = ToTensor()
    input = img_to_tensor(y).view(1, -1, y.size[1], y.size[0])

    out = model(input)
    out = out.cpu()
    out_img_y = out[0].numpy()  # expect: GG107
    out_img_y *= 255.0
    out_img_y = out_img_y.clip(0, 255)
    out_img_y = GrayImage(np.uint8(out_img_y[0]))

    out_img_cb = cb.resize(out_img_y.size)
    out_img_cr = cr.resize(out_img_y.size)
    out_img = merge_ycbcr_to_rgb(out_img_y, out_img_cb, out_img_cr)
    print('output image of shape', out_img.shape)
    return out_img


def main():
    torch.manual_seed(123)
    np.random.seed(123)
    upscale_factor = 3
    model = Net(upscale_factor=upscale_factor)
    criterion = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=0.001)

    training_data_loader = []
    for _ in range(3):
        target = torch.rand(4, 1, 24, 24)
        input = nn.functional.avg_pool2d(target, upscale_factor)
        training_data_loader.append((input, target))

    for epoch in range(1, 3):
        train(model, criterion, optimizer, training_data_loader, epoch)

    rgb = (np.random.rand(16, 20, 3) * 255).astype(np.uint8)
    super_resolve(model, rgb)


if __name__ == '__main__':
    main()
