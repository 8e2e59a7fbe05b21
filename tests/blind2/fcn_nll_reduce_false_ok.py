# Source: https://github.com/pytorch/pytorch/issues/6166
"""Segmentation with a fully convolutional network: LogSoftmax(dim=1) over the 4-D output and
NLLLoss(reduce=False), one loss per pixel, now averaged over the batch and the pixels before the
backward (loss.mean().backward()), which keeps the per-pixel losses available for weighting. A
small FCN and random images/labels stand in for the reporter's data; .cuda() is left out."""
import torch
import torch.nn as nn


class FCN(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                                     nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True))
        self.classifier = nn.Conv2d(16, num_classes, 1)
        self.upsample = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)

    def forward(self, x):
        return self.upsample(self.classifier(self.encoder(x)))


model = FCN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
logsoftmax = nn.LogSoftmax(dim=1)
criterion = torch.nn.NLLLoss(reduce=False)

for epoch in range(2):
    images, labels = torch.randn(2, 3, 8, 8), torch.randint(0, 4, (2, 8, 8))
    optimizer.zero_grad()
    outputs = model(images)
    outputs = logsoftmax(outputs)
    loss = criterion(outputs, labels)
    loss.mean().backward()
    optimizer.step()
