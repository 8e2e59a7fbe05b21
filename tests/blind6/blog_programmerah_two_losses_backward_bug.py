# Source: https://programmerah.com/solved-runtimeerror-trying-to-backward-through-the-graph-a-second-time-28387/
"""The post "[Solved] RuntimeError: Trying to backward through the graph a second time...": a
network with two outputs whose two losses are backwarded one after the other, `loss1.backward()`
then `loss2.backward()`, before `optimizer.step()`. Both losses run back through the shared trunk,
whose saved tensors the first backward freed, so the second raises the error. A two-headed net
(shared trunk, two heads) trained on random data stands in for the post's network."""
import torch
import torch.nn as nn


class TwoHeadNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh())
        self.head1 = nn.Linear(16, 3)
        self.head2 = nn.Linear(16, 1)

    def forward(self, x):
        features = self.trunk(x)
        return self.head1(features), self.head2(features)


net = TwoHeadNet()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
criterion1 = nn.CrossEntropyLoss()
criterion2 = nn.MSELoss()

for step in range(3):
    x = torch.randn(8, 10)
    y1 = torch.randint(0, 3, (8,))
    y2 = torch.randn(8, 1)
    output1, output2 = net(x)
    loss1 = criterion1(output1, y1)
    loss2 = criterion2(output2, y2)
    optimizer.zero_grad()
    loss1.backward()
    loss2.backward()  # expect: GG101
    optimizer.step()
