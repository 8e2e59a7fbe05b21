# Source: https://github.com/zeakey/iccv2019-fmeasure/issues/1
"""Salient-object detection trained with the F-measure loss (ICCV 2019) as the thread ends up using
it: FLoss.forward returns one 1 - F-measure per image, and the training loop averages them over
the batch (loss.mean().backward()) on sigmoid-activated predictions. A small conv net and random
maps stand in for the DRN backbone and the saliency data."""
import torch
from torch import nn


class FLoss(nn.Module):
    def __init__(self, beta=0.3, log_like=False):
        super(FLoss, self).__init__()
        self.beta = beta
        self.log_like = log_like

    def forward(self, prediction, target):
        EPS = 1e-10
        N = prediction.size(0)
        TP = (prediction * target).view(N, -1).sum(dim=1)
        H = self.beta * target.view(N, -1).sum(dim=1) + prediction.view(N, -1).sum(dim=1)
        fmeasure = (1 + self.beta) * TP / (H + EPS)
        if self.log_like:
            floss = -torch.log(fmeasure)
        else:
            floss = (1 - fmeasure)
        return floss


class SaliencyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True),
                                      nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True))
        self.score = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        return self.score(self.features(x))


def train(train_loader, model, optimizer, fl):
    model.train()
    for i, (data, target) in enumerate(train_loader):
        output = torch.sigmoid(model(data))
        loss = fl(output, target).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


model = SaliencyNet()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9, weight_decay=1e-4)
train_loader = [(torch.randn(4, 3, 16, 16), (torch.rand(4, 1, 16, 16) > 0.7).float()) for _ in range(2)]
train(train_loader, model, optimizer, FLoss(beta=0.3))
