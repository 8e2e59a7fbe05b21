# Source: https://jishuzhan.net/article/1722447953278275585
"""The post's fix: do not use `.detach()` on what the backward must reach. The loss is computed
from the predictions still in the graph; only the copy kept for the epoch's metrics is
detached."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.layers(x)


model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.MSELoss()
X, y = torch.randn(80, 5), torch.randn(80, 1)

for epoch in range(2):
    epoch_preds = []
    for i in range(0, 80, 20):
        preds = model(X[i:i + 20])
        epoch_preds.append(preds.detach())
        loss = criterion(preds, y[i:i + 20])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    mae = (torch.cat(epoch_preds) - y).abs().mean()
    print(epoch, mae.item())
