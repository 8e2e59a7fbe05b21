# Source: https://github.com/kuangliu/pytorch-retinanet/issues/38
"""kuangliu/pytorch-retinanet's retinanet.py self-test: one forward pass of RetinaNet gives the box
regressions and the class scores, both computed from the same FPN feature maps, and test()
backwards each with a random upstream gradient, `loc_preds.backward(loc_grads)` and then
`cls_preds.backward(cls_grads)`. The first backward frees the saved tensors of the shared FPN
graph, so the second raises "Trying to backward through the graph a second time". The reporter
ran `python retinanet.py` and got exactly that. The FPN50 backbone becomes a two-level conv
pyramid with the same 256-channel outputs, on 2 random 3x32x32 images."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class FPN(nn.Module):
    """Stand-in for FPN50: two bottom-up stages, lateral 1x1 convs, a top-down merge."""

    def __init__(self):
        super(FPN, self).__init__()
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, stride=2, padding=1)
        self.latlayer1 = nn.Conv2d(32, 256, kernel_size=1)
        self.latlayer2 = nn.Conv2d(16, 256, kernel_size=1)
        self.smooth = nn.Conv2d(256, 256, kernel_size=3, padding=1)

    def forward(self, x):
        c1 = F.relu(self.conv1(x))
        c2 = F.relu(self.conv2(c1))
        p2 = self.latlayer1(c2)
        p1 = F.interpolate(p2, scale_factor=2) + self.latlayer2(c1)
        return self.smooth(p1), p2


class RetinaNet(nn.Module):
    num_anchors = 9
    num_classes = 20

    def __init__(self):
        super(RetinaNet, self).__init__()
        self.fpn = FPN()
        self.loc_head = self._make_head(self.num_anchors*4)
        self.cls_head = self._make_head(self.num_anchors*self.num_classes)

    def forward(self, x):
        fms = self.fpn(x)
        loc_preds = []
        cls_preds = []
        for fm in fms:
            loc_pred = self.loc_head(fm)
            cls_pred = self.cls_head(fm)
            loc_pred = loc_pred.permute(0,2,3,1).contiguous().view(x.size(0),-1,4)
            cls_pred = cls_pred.permute(0,2,3,1).contiguous().view(x.size(0),-1,self.num_classes)
            loc_preds.append(loc_pred)
            cls_preds.append(cls_pred)
        return torch.cat(loc_preds,1), torch.cat(cls_preds,1)

    def _make_head(self, out_planes):
        layers = []
        for _ in range(2):
            layers.append(nn.Conv2d(256, 256, kernel_size=3, stride=1, padding=1))
            layers.append(nn.ReLU(True))
        layers.append(nn.Conv2d(256, out_planes, kernel_size=3, stride=1, padding=1))
        return nn.Sequential(*layers)


def test():
    net = RetinaNet()
    loc_preds, cls_preds = net(Variable(torch.randn(2,3,32,32)))
    print(loc_preds.size())
    print(cls_preds.size())
    loc_grads = Variable(torch.randn(loc_preds.size()))
    cls_grads = Variable(torch.randn(cls_preds.size()))
    loc_preds.backward(loc_grads)
    cls_preds.backward(cls_grads)  # expect: GG101


test()
