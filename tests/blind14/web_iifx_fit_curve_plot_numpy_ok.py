# Source: https://iifx.dev/en/articles/323454472
"""The curve-fitting script with the article's fix: the plotting helper predicts under
`torch.no_grad()` and converts with `.detach().numpy()`, so NumPy receives tensors without a graph.
"""
import numpy as np
import torch
import torch.nn as nn


class FakeAxes:
    """Stand-in for a matplotlib Axes: keeps the plotted arrays."""

    def __init__(self):
        self.lines = []

    def plot(self, x, y, label=None):
        self.lines.append((np.asarray(x), np.asarray(y), label))


class CurveNet(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


def plot_fit(ax, model, xs, epoch):
    with torch.no_grad():
        preds = model(xs)
    ax.plot(xs.numpy().ravel(), preds.detach().numpy().ravel(), label=f"epoch {epoch}")


xs = torch.linspace(-3, 3, 64).unsqueeze(1)
ys = torch.sin(xs) + 0.1 * torch.randn_like(xs)
model = CurveNet()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
ax = FakeAxes()
for epoch in range(20):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(xs), ys)
    loss.backward()
    opt.step()
    if epoch % 5 == 4:
        plot_fit(ax, model, xs, epoch)
print(len(ax.lines), loss.item())
