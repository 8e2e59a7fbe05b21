# Source: https://discuss.pytorch.org/t/grad-can-be-implicitly-created-only-for-scalar-outputs/116234/2
"""The answer's second fix: reduce the weighted per-sample losses to a scalar before the
backward (`loss.mean().backward()`), which also makes the printed loss one number."""
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(1)


model = Regressor(n_in=6)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.MSELoss(reduction='none')

X, y = torch.randn(64, 6), torch.randn(64)
sample_weight = torch.rand(64) + 0.5

for epoch in range(2):
    for i in range(0, 64, 16):
        pred = model(X[i:i + 16])
        loss = (criterion(pred, y[i:i + 16]) * sample_weight[i:i + 16]).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
