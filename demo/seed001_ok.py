"""Two outputs of one network, each with its own loss, backwarded one after the other."""
import torch
import torch.nn as nn


class TwoHeadNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.head1 = nn.Linear(8, 3)
        self.head2 = nn.Linear(8, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.head1(h), self.head2(h)


net = TwoHeadNet()
criterion1 = nn.CrossEntropyLoss()
criterion2 = nn.MSELoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)

for step in range(3):
    inputs = torch.randn(5, 4)
    labels = torch.randint(0, 3, (5,))
    targets = torch.randn(5, 1)

    optimizer.zero_grad()
    output1, output2 = net(inputs)
    loss1 = criterion1(output1, labels)
    loss2 = criterion2(output2, targets)
    loss1.backward(retain_graph=True)  # Keep the intermediate arguments after backward.
    loss2.backward()  # All intermediate variables are freed for the next loop
    optimizer.step()  # update parameters
