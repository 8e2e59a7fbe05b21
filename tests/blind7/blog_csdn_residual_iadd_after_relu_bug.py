# Source: https://blog.csdn.net/m0_38129460/article/details/90405086
"""The CSDN post "what is an inplace operation" on the error "one of the variables needed for
gradient computation has been modified by an inplace operation": in a residual block the shortcut
is added with `x += res`. Placed before the activation (the post's position C) it works; moved
after the activation B it fails, because B saved x for the backward and `x += res` then changes
it. A small residual regressor whose blocks add the shortcut after the ReLU, trained on random
data: the first loss.backward() raises."""
import torch
import torch.nn as nn


class ResidualBlock(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)    # A
        self.bn = nn.BatchNorm1d(width)
        self.relu = nn.ReLU()                # B

    def forward(self, x):
        res = x
        x = self.fc(x)
        x = self.bn(x)
        x = self.relu(x)
        x += res                             # after B: ReLU saved x
        return x


class ResidualRegressor(nn.Module):
    def __init__(self, n_in, width, n_blocks):
        super().__init__()
        self.stem = nn.Linear(n_in, width)
        self.blocks = nn.Sequential(*[ResidualBlock(width) for _ in range(n_blocks)])
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


model = ResidualRegressor(n_in=6, width=16, n_blocks=2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.MSELoss()
X = torch.randn(64, 6)
y = torch.randn(64, 1)

for epoch in range(3):
    for i in range(0, 64, 16):
        optimizer.zero_grad()
        loss = criterion(model(X[i:i + 16]), y[i:i + 16])
        loss.backward()  # expect: GG103
        optimizer.step()
    print(epoch, loss.item())
