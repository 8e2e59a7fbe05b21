# Source: https://wenku.csdn.net/answer/17zn5hshv1
"""The user's `loss.backward()` fails with "Trying to backward through the graph a second time";
retain_graph=True made it run out of memory. The answer points at the code the user quoted: an
intermediate result z1 is computed once and reused by every training step, so each step's graph
hangs off z1's graph, which the first backward freed. Here z1 are a backbone's features of the
training inputs, computed before the loop; only the head is trained. Fix from the answer: cut z1
off the graph with `detach()` (the backbone is not being trained), not retain_graph.
"""
import torch
import torch.nn as nn


class Backbone(nn.Module):
    def __init__(self, n_in, n_feat):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, n_feat))

    def forward(self, x):
        return self.body(x)


class Head(nn.Module):
    def __init__(self, n_feat, n_cls):
        super().__init__()
        self.fc = nn.Linear(n_feat, n_cls)

    def forward(self, z):
        return self.fc(z)


def extract(backbone, x):
    z1 = backbone(x)
    return z1


x = torch.randn(32, 10)
labels = torch.randint(0, 3, (32,))
backbone, head = Backbone(10, 16), Head(16, 3)
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()

z1 = extract(backbone, x)
for step in range(4):
    optimizer.zero_grad()
    loss = criterion(head(z1), labels)
    loss.backward()  # expect: GG101
    optimizer.step()
    print(step, loss.item())
