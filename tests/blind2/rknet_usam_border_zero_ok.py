# Source: https://github.com/AggMan96/RK-Net/issues/9
"""RK-Net (cross-view geo-localisation) with its USAM attention unit after the stem, with the fix
from the thread: under `if self.polish:` the unit first takes att = att.clone(), so zeroing the
border of the attention map writes to the copy and the ReLU's saved output is left as it was. A
small conv stack stands in for the ImageNet ResNet-50."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class USAM(nn.Module):
    def __init__(self, kernel_size=3, padding=1, polish=True):
        super(USAM, self).__init__()

        kernel = torch.ones((kernel_size, kernel_size))
        kernel = kernel.unsqueeze(0).unsqueeze(0)
        self.weight = nn.Parameter(data=kernel, requires_grad=False)

        kernel2 = torch.ones((1, 1)) * (kernel_size * kernel_size)
        kernel2 = kernel2.unsqueeze(0).unsqueeze(0)
        self.weight2 = nn.Parameter(data=kernel2, requires_grad=False)

        self.polish = polish
        self.pad = padding
        self.relu = nn.ReLU()
        self.bn = nn.BatchNorm2d(1)

    def __call__(self, x):
        fmap = x.sum(1, keepdim=True)
        x1 = F.conv2d(fmap, self.weight, padding=self.pad)
        x2 = F.conv2d(fmap, self.weight2, padding=0)

        att = x2 - x1
        att = self.bn(att)
        att = self.relu(att)

        if self.polish:
            att = att.clone()
            att[:, :, :, 0] = 0
            att[:, :, :, -1] = 0
            att[:, :, 0, :] = 0
            att[:, :, -1, :] = 0

        output = x + att * x

        return output


class RKNet(nn.Module):
    def __init__(self, class_num=5):
        super(RKNet, self).__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.usam_1 = USAM()
        self.layer1 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.usam_2 = USAM()
        self.layer2 = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU())
        self.avgpool2 = nn.AdaptiveAvgPool2d((1, 1))
        self.classifier = nn.Linear(32, class_num)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.usam_1(x)
        x = self.layer1(x)
        x = self.usam_2(x)
        x = self.layer2(x)
        x = self.avgpool2(x).flatten(1)
        return self.classifier(x)


def train_model(model, criterion, optimizer, dataloaders, num_epochs=1):
    for epoch in range(num_epochs):
        model.train(True)
        for inputs, labels in dataloaders['satellite']:
            optimizer.zero_grad()
            outputs = model(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()


model = RKNet()
dataloaders = {'satellite': [(torch.randn(2, 3, 16, 16), torch.tensor([1, 4])) for _ in range(2)]}
optimizer_ft = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4, nesterov=True)
train_model(model, nn.CrossEntropyLoss(), optimizer_ft, dataloaders)
