# Source: https://taourl.com/read-2558242.html
"""The Q&A "In UNet3+ - RuntimeError: one of the variables needed for gradient computation has
been modified by an inplace operation": the answer's excerpt is a UNet3+ module whose forward
runs `x = self.conv(x)` and then `x += 1`, "an inplace operation causing the error"; its fix is
`x = x + 1`. In UNet3+ the `conv` of a stage is the unetConv2 block (Conv2d, BatchNorm2d,
ReLU(inplace=True)), and ReLU saves its output for backward, so the in-place add on the block's
output fails at backward (a bare Conv2d, as in the answer's simplified module, saves only its
input and would not raise). A two-stage encoder with a 1x1 segmentation head trained on random
images and masks."""
import torch
import torch.nn as nn


class unetConv2(nn.Module):
    def __init__(self, in_size, out_size):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(in_size, out_size, 3, 1, 1),
                                  nn.BatchNorm2d(out_size), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.conv(x)


class UNet3Plus(nn.Module):
    def __init__(self, in_channels=3, n_classes=2):
        super().__init__()
        self.conv = unetConv2(in_channels, 8)
        self.conv2 = unetConv2(8, 8)
        self.head = nn.Conv2d(8, n_classes, 1)

    def forward(self, x):
        x = self.conv(x)
        x += 1
        x = self.conv2(x)
        return self.head(x)


model = UNet3Plus()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    images, masks = torch.randn(2, 3, 16, 16), torch.randint(0, 2, (2, 16, 16))
    optimizer.zero_grad()
    loss = criterion(model(images), masks)
    loss.backward()  # expect: GG103
    optimizer.step()
    print(step, loss.item())
