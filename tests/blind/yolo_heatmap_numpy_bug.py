# Source: https://github.com/XiaMooo/Yolo-Detect-Layer-Visualization/issues/1
"""Detect-layer visualisation for a YOLO model: the raw outputs of the detection heads (computed
with grad enabled, as the model is an nn.Module in training-capable state) are passed to
plot_multi_heatmap, which converts each with array.cpu().numpy()."""
import numpy as np
import torch
import torch.nn as nn


class DetectHead(nn.Module):
    def __init__(self, ch=(4, 8), na=3, nc=2):
        super().__init__()
        self.m = nn.ModuleList(nn.Conv2d(c, na * (nc + 5), 1) for c in ch)
        self.na, self.no = na, nc + 5

    def forward(self, feats):
        outs = []
        for i, x in enumerate(feats):
            bs, _, ny, nx = x.shape
            outs.append(self.m[i](x).view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2))
        return outs


def plot_multi_heatmap(*arrays, title=None, row=None, col=None):
    col = col or len(arrays)
    heat = []
    for i, array in enumerate(arrays):
        if isinstance(array, torch.Tensor):
            array = array.cpu().numpy()  # expect: GG107
        heat.append((array - array.min()) / (np.ptp(array) + 1e-9))  # sns.heatmap(array, ax=axi)
    return heat


backbone = nn.ModuleList([nn.Conv2d(3, 4, 3, stride=2, padding=1), nn.Conv2d(4, 8, 3, stride=2, padding=1)])
head = DetectHead()
img = torch.rand(1, 3, 16, 16)
feats, x = [], img
for layer in backbone:
    x = torch.relu(layer(x))
    feats.append(x)
outs = head(feats)
objectness = [o[0, 0, ..., 4] for o in outs]  # anchor 0's objectness logit per cell
plot_multi_heatmap(*objectness, title="objectness")
