# Source: https://blog.csdn.net/m0_38129460/article/details/90405086
"""The fix the CSDN post gives: when memory is not a concern, add the shortcut out of place,
`x = x + res`, which leaves the ReLU output that autograd saved untouched (the post's other
option is to add before the activation, its position C). The residual regressor trains."""
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
        x = x + res                          # a new tensor: ReLU's saved output is kept
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
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
