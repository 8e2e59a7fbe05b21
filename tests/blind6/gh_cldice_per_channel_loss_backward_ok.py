# Source: https://github.com/dmitrysarov/clDice/issues/3
"""Training with clDice as its docstring intends: soft_cldice_loss gives one value per sample and
channel, and the training loop averages them, `soft_cldice_loss(pred, mask).mean()`, before the
backward. Same repository functions, two-channel sigmoid conv net and random images and masks."""
import torch
import torch.nn as nn


def soft_skeletonize(x, thresh_width=10):
    '''
    Differenciable aproximation of morphological skelitonization operaton
    thresh_width - maximal expected width of vessel
    '''
    for i in range(thresh_width):
        min_pool_x = torch.nn.functional.max_pool2d(x * -1, (3, 3), 1, 1) * -1
        contour = torch.nn.functional.relu(torch.nn.functional.max_pool2d(min_pool_x, (3, 3), 1, 1) - min_pool_x)
        x = torch.nn.functional.relu(x - contour)
    return x


def norm_intersection(center_line, vessel):
    smooth = 1.
    clf = center_line.view(*center_line.shape[:2], -1)
    vf = vessel.view(*vessel.shape[:2], -1)
    intersection = (clf * vf).sum(-1)
    return (intersection + smooth) / (clf.sum(-1) + smooth)


def soft_cldice_loss(pred, target, target_skeleton=None):
    cl_pred = soft_skeletonize(pred)
    if target_skeleton is None:
        target_skeleton = soft_skeletonize(target)
    iflat = norm_intersection(cl_pred, target)
    tflat = norm_intersection(target_skeleton, pred)
    intersection = iflat * tflat
    return -((2. * intersection) /
             (iflat + tflat))


class SegNet(nn.Module):
    def __init__(self, in_ch=1, n_classes=2, width=8):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(in_ch, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, n_classes, 1),
        )

    def forward(self, x):
        return torch.sigmoid(self.body(x))


model = SegNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    image = torch.randn(4, 1, 16, 16)
    mask = (torch.rand(4, 2, 16, 16) > 0.7).float()
    optimizer.zero_grad()
    pred = model(image)
    loss = soft_cldice_loss(pred, mask).mean()
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())
