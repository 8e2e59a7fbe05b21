# Source: https://iifx.dev/en/articles/323454472
"""The article on "Can't call numpy() on Tensor that requires grad": converting a tensor with
requires_grad=True straight to NumPy is refused because NumPy cannot carry the graph. Here a
curve-fitting script trains a small MLP on noisy sin data and, every few epochs, a plotting helper
turns the model's predictions into NumPy arrays with `.numpy()` (matplotlib replaced by a stand-in
that only stores the arrays); the predictions carry the graph, so torch raises. Fix from the
article: `var.detach().numpy()` (here the helper predicts under `torch.no_grad()` and detaches).
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
    preds = model(xs)
    ax.plot(xs.numpy().ravel(), preds.numpy().ravel(), label=f"epoch {epoch}")  # expect: GG107


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
