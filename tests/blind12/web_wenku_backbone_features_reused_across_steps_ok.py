# Source: https://wenku.csdn.net/answer/17zn5hshv1
"""The user's training loop with the answer's fix: the intermediate result z1 (a backbone's
features of the training inputs, computed once before the loop; only the head is trained) is cut
off the graph with `detach()`, so each step's backward walks only the head's fresh graph.
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
    z1 = backbone(x).detach()
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
    loss.backward()
    optimizer.step()
    print(step, loss.item())
