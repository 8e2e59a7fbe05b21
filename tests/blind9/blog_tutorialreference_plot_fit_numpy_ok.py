# Source: https://tutorialreference.com/python/examples/faq/python-pytorch-error-runtimeerror-cant-call-numpy-on-tensor-that-requires-grad-detach
"""The guide's solutions: compute the curve to plot under torch.no_grad() (or call
.detach().numpy()), so the tensor handed to NumPy carries no graph."""
import numpy as np
import torch
import torch.nn as nn


def plot_curve(xs, ys, label):
    """Stand-in for plt.plot(xs, ys, label=label): works on NumPy arrays."""
    xs, ys = np.asarray(xs).ravel(), np.asarray(ys).ravel()
    print(label, "points:", len(xs), "y range:", float(ys.min()), float(ys.max()))


x = torch.linspace(-3, 3, 64).unsqueeze(1)
y = torch.sin(x) + 0.1 * torch.randn_like(x)
model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

for epoch in range(20):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()

plot_curve(x.numpy(), y.numpy(), "data")
with torch.no_grad():
    y_pred = model(x)
plot_curve(x.numpy(), y_pred.numpy(), "fit")
