# Source: http://discuss.pytorch.org/t/in-place-operation-and-resnet/10724
"""The thread's working variant (the poster's ResidualUnitB): the unit keeps `identity = x` and
lets conv_1/bn_1 produce a new tensor, then adds the identity in place into bn_1's output, which
no backward needs (BatchNorm saves its input, not its output). conv_1's saved input is never
overwritten. Same training as the bug variant."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualUnitB(nn.Module):
    def __init__(self):
        super(ResidualUnitB, self).__init__()
        self.conv_0 = nn.Conv2d(3, 24, 3, padding=1, bias=False)
        self.bn_0 = nn.BatchNorm2d(24)
        self.conv_1 = nn.Conv2d(24, 24, 3, padding=1, bias=False)
        self.bn_1 = nn.BatchNorm2d(24)

    def forward(self, x):
        x = self.conv_0(x)
        x = self.bn_0(x)
        x = F.relu(x, inplace=True)

        identity = x
        x = self.conv_1(x)
        x = self.bn_1(x)
        x += identity
        x = F.relu(x, inplace=True)

        return x


class Net(nn.Module):
    def __init__(self, num_classes=10):
        super(Net, self).__init__()
        self.unit = ResidualUnitB()
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
    loss.backward()
    optimizer.step()
    print(step, loss.item())
