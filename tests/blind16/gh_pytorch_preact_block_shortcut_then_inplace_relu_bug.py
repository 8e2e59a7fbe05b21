# Source: https://github.com/pytorch/pytorch/issues/15428
"""CoinCheung's pre-activation residual block: `forward` computes the shortcut first
(`sc = self.shortcut(x)`, a 1x1 conv that saves its input x) and then `resd = self.residual(x)`,
whose first layer is `nn.ReLU(inplace=True)`: it rewrites x in place, so the shortcut conv's saved
input is at a newer version and `loss.backward()` raises "one of the variables needed for gradient
computation has been modified by an inplace operation". The user noticed that computing the
residual before the shortcut makes the error go away; the answer (ChunML): the residual's first
ReLU must not be in place. A small CIFAR-sized network of such blocks and random batches."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, in_chan, out_chan, stride=1):
        super(Block, self).__init__()
        self.in_chan, self.out_chan, self.stride = in_chan, out_chan, stride
        self.residual = nn.Sequential(
            nn.ReLU(inplace=True),
            nn.Conv2d(in_chan, out_chan, kernel_size=3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(out_chan),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_chan, out_chan, kernel_size=3, stride=1, padding=1, bias=False),
        )
        if stride != 1 or in_chan != out_chan:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_chan, out_chan, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(out_chan),
            )

    def forward(self, x):
        if not self.stride == 1 or not self.in_chan == self.out_chan:
            sc = self.shortcut(x)
        else:
            sc = x
        resd = self.residual(x)
        out = resd + sc
        return out


class Network(nn.Module):
    def __init__(self, n_classes=10):
        super(Network, self).__init__()
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = nn.Sequential(Block(16, 32, stride=2), Block(32, 32))
        self.bn_out = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32, n_classes)

    def forward(self, x):
        x = self.bn1(self.conv1(x))
        x = self.layer1(x)
        x = F.relu(self.bn_out(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


torch.manual_seed(0)
net = Network()
criterion = nn.CrossEntropyLoss()
optim = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
for it in range(2):
    im = torch.randn(4, 3, 16, 16)
    label = torch.randint(0, 10, (4,))
    optim.zero_grad()
    logits = net(im)
    loss = criterion(logits, label)
    loss.backward()  # expect: GG103
    optim.step()
    print(it, loss.item())
