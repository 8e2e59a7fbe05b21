# Source: https://duoke360.com/post/34087
"""The post "PyTorch: Can't call numpy() on Variable that requires grad. Use var.detach().numpy()
instead": in a training loop the batch loss is turned into a NumPy value to draw the loss curve
in real time (`plt.plot(...)`); calling `loss.numpy()` on the loss, which requires grad, raises
"Can't call numpy() on Tensor that requires grad". matplotlib is replaced by a small live-plot
recorder; the model is a two-layer regressor trained on random batches."""
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
    loss_np = loss.numpy()  # expect: GG107
    plt.plot(loss_np)
print(len(plt.ys))
