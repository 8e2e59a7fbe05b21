# Source: https://github.com/LZGMatrix/BOP19_CDPN_2019ICCV/issues/4
"""The CDPN training step with the maintainer's answer: "torch.argmax() is nondifferentiable, so you
need to take the loss before torch.argmax()". The loss is a cross entropy of each axis's bin
scores against the target coordinate's bin; the argmax decoding is kept for monitoring."""
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

    target_bin = ((target_coor + 1.0) / 2.0 * (63.0-1.0)).round().long()  # [8, 8, 3]
    loss = sum(nn.functional.cross_entropy(scores.unsqueeze(0), target_bin[..., axis].unsqueeze(0))
               for axis, scores in enumerate([output_coor_x_, output_coor_y_, output_coor_z_]))
    print(step, loss.item(), criterion(output_coor_, target_coor).item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
