# Source: https://github.com/phanideepgampa/stacked-capsule-networks/issues/15
"""stacked-capsule-networks (SCAE in PyTorch), model.py: the geometric transform of each capsule
is built from sigmoid outputs, and the rotation angle is scaled in place (`theta *= 2. * math.pi`,
line 103). Sigmoid saves its output for backward, so the training loss's backward raises "one of
the variables needed for gradient computation has been modified by an inplace operation". Fix
from the report (_ok): `theta = theta * 2. * math.pi`. Part capsule encoder, templates and the
likelihood are shrunk; images are random.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def geometric_transform(pose_tensor, similarity=False, nonlinear=True):
    scale_x, scale_y, theta, shear, trans_x, trans_y = torch.split(pose_tensor, 1, -1)
    if nonlinear:
        scale_x, scale_y = torch.sigmoid(scale_x) + 1e-2, torch.sigmoid(scale_y) + 1e-2
        trans_x, trans_y, shear = torch.tanh(trans_x * 5.), torch.tanh(trans_y * 5.), torch.tanh(shear * 5.)
        theta = torch.sigmoid(theta)
        theta *= 2. * math.pi
    else:
        scale_x, scale_y = (abs(i) + 1e-2 for i in (scale_x, scale_y))
    c, s = torch.cos(theta), torch.sin(theta)
    if similarity:
        scale = scale_x
        pose = [scale * c, -scale * s, trans_x, scale * s, scale * c, trans_y]
    else:
        pose = [scale_x * c + shear * scale_y * s, -scale_x * s + shear * scale_y * c, trans_x,
                scale_y * s, scale_y * c, trans_y]
    pose = torch.cat(pose, -1)
    return pose.view(*pose.shape[:-1], 2, 3)


class PrimaryImageEncoder(nn.Module):
    def __init__(self, n_caps=4, n_poses=6):
        super().__init__()
        self.n_caps, self.n_poses = n_caps, n_poses
        self.conv = nn.Sequential(nn.Conv2d(1, 8, 3, 2, 1), nn.ReLU(), nn.Conv2d(8, 8, 3, 2, 1), nn.ReLU())
        self.head = nn.Linear(8 * 4 * 4, n_caps * (n_poses + 1))

    def forward(self, x):
        h = self.head(self.conv(x).flatten(1)).view(-1, self.n_caps, self.n_poses + 1)
        pose, presence_logit = h[..., :-1], h[..., -1]
        return pose, torch.sigmoid(presence_logit)


class TemplateImageDecoder(nn.Module):
    def __init__(self, n_caps=4, template_size=5, out_size=16):
        super().__init__()
        self.templates = nn.Parameter(torch.rand(n_caps, 1, template_size, template_size))
        self.out_size = out_size

    def forward(self, pose, presence):
        b, k = pose.shape[:2]
        affine = geometric_transform(pose).view(b * k, 2, 3)
        grid = F.affine_grid(affine, (b * k, 1, self.out_size, self.out_size), align_corners=False)
        templates = torch.sigmoid(self.templates).repeat(b, 1, 1, 1)
        transformed = F.grid_sample(templates, grid, align_corners=False).view(b, k, self.out_size, self.out_size)
        return (transformed * presence[..., None, None]).sum(1)


class SCAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.primary_encoder = PrimaryImageEncoder()
        self.primary_decoder = TemplateImageDecoder()

    def forward(self, img):
        pose, presence = self.primary_encoder(img)
        rec = self.primary_decoder(pose, presence)
        return F.mse_loss(rec, img[:, 0])


model = SCAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
for step in range(2):
    img = torch.rand(4, 1, 16, 16)
    loss = model(img)
    optimizer.zero_grad()
    loss.backward()  # expect: GG103
    optimizer.step()
