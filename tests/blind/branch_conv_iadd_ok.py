# Source: https://discuss.pytorch.org/t/when-would-the-error-one-of-the-variables-needed-for-gradient-computation-has-been-modified-occur/11976/2
"""A network that bifurcates the data flow after conv1: conv1_p reads x for a side branch, then the
main branch adds a skip feature with x = x + some_layer (the answer), a new tensor: the x that
conv1_p saved for its backward is left as it was."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoBranchNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv1_p = nn.Conv2d(8, 8, 3, padding=1)
        self.skip = nn.Conv2d(3, 8, 1)
        self.head = nn.Linear(16, 2)

    def forward(self, input):
        x = self.conv1(input)  # main branch
        x_p = self.conv1_p(x)  # another branch
        some_layer = self.skip(input)
        x = x + some_layer  # main branch
        feats = torch.cat([F.adaptive_avg_pool2d(x, 1), F.adaptive_avg_pool2d(x_p, 1)], 1).flatten(1)
        return self.head(feats)


net = TwoBranchNet()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
for step in range(2):
    images, labels = torch.randn(2, 3, 8, 8), torch.tensor([0, 1])
    loss = F.cross_entropy(net(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
