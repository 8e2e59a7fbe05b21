# Source: https://blog.csdn.net/realitycss/article/details/116855385
"""The regression loop of the CSDN notes' numpy() remark with the notes' fix: the NumPy R^2 metric
converts the predictions with `pred.detach().numpy()`, which leaves the graph alone.
"""
import numpy as np
import torch
import torch.nn as nn


def r2_score(pred, target):
    p = pred.detach().numpy()
    t = target.numpy()
    ss_res = ((t - p) ** 2).sum()
    ss_tot = ((t - t.mean()) ** 2).sum()
    return 1.0 - ss_res / ss_tot


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x).squeeze(1)


x = torch.randn(64, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5]) + 0.1 * torch.randn(64)
model = MLP()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
history = []
for epoch in range(5):
    pred = model(x)
    loss = nn.functional.mse_loss(pred, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    history.append(r2_score(pred, y))
print(np.round(history, 3))
