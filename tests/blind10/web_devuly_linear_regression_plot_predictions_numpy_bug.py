# Source: https://devuly.com/?p=186
"""The devuly article on PyTorch fundamentals (autograd, gradient descent, "tensor detachment with
detach()", and a full linear-regression workflow with torch.nn, torch.optim, MSELoss, matplotlib
and scikit-learn): the fitted line is plotted from the model's predictions, which are part of the
graph, so turning them into a NumPy array without detach() raises "Can't call numpy() on Tensor
that requires grad". The workflow with numpy stand-ins for sklearn's make_regression and for
matplotlib (neither is imported here)."""
import numpy as np
import torch
import torch.nn as nn


def make_regression(n_samples=40, noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n_samples, 1))
    y = 3.0 * x[:, 0] + 0.5 + noise * rng.normal(size=n_samples)
    return x, y


class Plot:
    def __init__(self):
        self.series = []

    def scatter(self, x, y):
        self.series.append(("scatter", np.asarray(x), np.asarray(y)))

    def plot(self, x, y):
        self.series.append(("line", np.asarray(x), np.asarray(y)))


X_np, y_np = make_regression()
x = torch.tensor(X_np, dtype=torch.float32)
y = torch.tensor(y_np, dtype=torch.float32).view(-1, 1)

model = nn.Linear(1, 1)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(20):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

plt = Plot()
plt.scatter(x.numpy(), y.numpy())
predicted = model(x)
plt.plot(x.numpy(), predicted.numpy())  # expect: GG107
print(model.weight.item(), model.bias.item(), loss.item())
