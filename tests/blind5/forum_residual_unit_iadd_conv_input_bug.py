# Source: http://discuss.pytorch.org/t/in-place-operation-and-resnet/10724
"""The forum poster's ResidualUnitA: after conv_0/bn_0 and an in-place ReLU, the residual branch
runs conv_1 on x, then `x += residual` adds the branch back in place. conv_1 saved x (its input)
for the weight gradient, so the training step's backward raises "one of the variables needed for
gradient computation has been modified by an inplace operation" (the thread: "the back-propagation
of self.conv_1 needs the original value of x"). The unit is trained as the poster's network's first
block on random 3-channel images with a small classifier head and SGD."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualUnitA(nn.Module):
    def __init__(self):
        super(ResidualUnitA, self).__init__()
        self.conv_0 = nn.Conv2d(3, 24, 3, padding=1, bias=False)
        self.bn_0 = nn.BatchNorm2d(24)
        self.conv_1 = nn.Conv2d(24, 24, 3, padding=1, bias=False)
        self.bn_1 = nn.BatchNorm2d(24)

    def forward(self, x):
        x = self.conv_0(x)
        x = self.bn_0(x)
        x = F.relu(x, inplace=True)

        residual = self.conv_1(x)
        residual = self.bn_1(residual)
        x += residual
        x = F.relu(x, inplace=True)

        return x


class Net(nn.Module):
    def __init__(self, num_classes=10):
        super(Net, self).__init__()
        self.unit = ResidualUnitA()
        self.fc = nn.Linear(24, num_classes)

    def forward(self, x):
        x = self.unit(x)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


model = Net()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

for step in range(3):
    images = torch.randn(4, 3, 16, 16)
    labels = torch.randint(0, 10, (4,))
    optimizer.zero_grad()
    loss = criterion(model(images), labels)
    loss.backward()  # expect: GG103
    optimizer.step()
    print(step, loss.item())
