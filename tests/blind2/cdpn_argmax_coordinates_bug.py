# Source: https://github.com/LZGMatrix/BOP19_CDPN_2019ICCV/issues/4
"""A reporter writing a train.py for CDPN from its test.py: the network predicts, per pixel, a
distribution over coordinate bins for x, y and z; the reporter decodes them as test.py does
(torch.argmax over the bins, rescaled to [-1, 1]) and takes the loss on the decoded coordinates.
argmax has no gradient, so the loss has no grad_fn: "My loss.backward() can't work!". A small
conv net stands in for the ResNet backbone and rotation head."""
import torch
import torch.nn as nn


class cfg:
    class network:
        coor_bin = 64


class RotHead(nn.Module):
    def __init__(self, in_channels=8, bins=cfg.network.coor_bin):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, in_channels, 3, padding=1), nn.ReLU())
        self.out = nn.Conv2d(in_channels, 3 * (bins + 1), 1)
        self.bins = bins

    def forward(self, x):
        out = self.out(self.features(x))
        return torch.split(out, self.bins + 1, dim=1)  # x, y, z bin scores


model = RotHead()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
criterion = nn.L1Loss()

for step in range(2):
    inp = torch.randn(1, 3, 8, 8)
    target_coor = torch.rand(8, 8, 3) * 2 - 1

    output_coor_x_, output_coor_y_, output_coor_z_ = model(inp)
    output_coor_x_ = output_coor_x_.squeeze()
    output_coor_y_ = output_coor_y_.squeeze()
    output_coor_z_ = output_coor_z_.squeeze()

    ####

    output_coor_ = torch.stack([torch.argmax(output_coor_x_, axis=0),
                                torch.argmax(output_coor_y_, axis=0),
                                torch.argmax(output_coor_z_, axis=0)], axis=2)
    output_coor_[output_coor_ == cfg.network.coor_bin] = 0
    output_coor_ = 2.0 * output_coor_.float() / (63.0-1.0) - 1.0      # [-1,1]

    loss = criterion(output_coor_, target_coor)
    optimizer.zero_grad()
    loss.backward()  # expect: GG104
    optimizer.step()
