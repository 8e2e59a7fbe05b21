# Source: https://programmerah.com/solved-runtimeerror-trying-to-backward-through-the-graph-a-second-time-28387/
"""The post's correct code: the first backward keeps the graph,
`loss1.backward(retain_graph=True)`, and the second one frees it, then one optimizer step."""
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
    loss1.backward(retain_graph=True)  # Keep the intermediate arguments after backward.
    loss2.backward()  # All intermediate variables are freed for the next loop
    optimizer.step()
