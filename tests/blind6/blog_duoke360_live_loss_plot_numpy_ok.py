# Source: https://duoke360.com/post/34087
"""The post's fix: detach before converting, `loss.detach().numpy()` (a view of the loss value
outside the graph), then plot it."""
import numpy as np
import torch
import torch.nn as nn


class LivePlot:
    """Stand-in for the pyplot figure the post draws into: keeps the points it is given."""

    def __init__(self):
        self.ys = []

    def plot(self, y):
        self.ys.append(np.asarray(y, dtype=np.float64))


plt = LivePlot()
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
dataloader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(5)]

for data, target in dataloader:
    output = model(data)
    loss = criterion(output, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    loss_np = loss.detach().numpy()
    plt.plot(loss_np)
print(len(plt.ys))
