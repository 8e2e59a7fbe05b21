# Source: https://runebook.dev/ja/docs/pytorch/generated/torch.nn.functional.leaky_relu
"""Gated MLP block that applies ``F.leaky_relu(..., inplace=True)`` to a tensor another layer still needs.

The page warns that ``F.leaky_relu(input, inplace=True)`` saves memory by
overwriting its input, but that autograd complains ("the data has changed")
when a later computation still needs the original values.  Here that happens
in a small tabular classifier built from gated residual blocks: the block's
hidden features ``h = self.fc(x)`` feed the gate ``self.gate(h)`` (a Linear,
which saves its input ``h`` for the weight gradient) and are then activated
with ``F.leaky_relu(h, 0.1, inplace=True)``, which overwrites ``h``.  The
training step's ``loss.backward()`` raises "one of the variables needed for
gradient computation has been modified by an inplace operation".

Fix (the page's advice): use the out-of-place ``F.leaky_relu(h, 0.1)``
(see the _ok twin).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_FEATURES, HIDDEN, N_CLASSES = 12, 32, 3


class GatedBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.gate = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.fc(x)
        g = torch.sigmoid(self.gate(h))
        h = F.leaky_relu(h, negative_slope=0.1, inplace=True)  # メモリ節約
        return x + g * h


class TabularNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(N_FEATURES, HIDDEN)
        self.blocks = nn.Sequential(GatedBlock(HIDDEN), GatedBlock(HIDDEN))
        self.head = nn.Linear(HIDDEN, N_CLASSES)

    def forward(self, x):
        return self.head(self.blocks(self.inp(x)))


X = torch.randn(64, N_FEATURES)
y = torch.randint(0, N_CLASSES, (64,))

model = TabularNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()

for epoch in range(3):
    for i in range(0, len(X), 16):
        xb, yb = X[i:i + 16], y[i:i + 16]
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()  # expect: GG103
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
