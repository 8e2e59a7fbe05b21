# Source: https://github.com/arthurdouillard/deepcourse/issues/11
"""deepcourse's Autograd notebook with the reporter's fix: the loop appends loss.detach(), a
tensor cut from the graph, so plt.plot's numpy conversion of the losses works."""
import numpy as np
import torch


class _Pyplot:
    """Stand-in for matplotlib.pyplot: keeps the converted data instead of drawing it."""

    def __init__(self):
        self.lines = []

    def subplot(self, *args):
        pass

    def plot(self, x, y):
        self.lines.append((np.asarray(x, dtype=float), np.asarray(y, dtype=float)))

    def xlabel(self, label):
        pass

    def ylabel(self, label):
        pass

    def show(self):
        pass


plt = _Pyplot()


def model(x, w, b):
    return x @ w + b


def mse(y_pred, y):
    return ((y_pred - y) ** 2).mean()


x = torch.randn(64, 3)
true_w = torch.tensor([[1.5], [-2.0], [0.5]])
y = x @ true_w + 0.3 + 0.1 * torch.randn(64, 1)

w = torch.randn(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
learning_rate = 0.1

epochs = []
losses = []
accuracies = []
for epoch in range(20):
    y_pred = model(x, w, b)
    loss = mse(y_pred, y)
    loss.backward()

    with torch.no_grad():
        w -= learning_rate * w.grad
        b -= learning_rate * b.grad
        w.grad.zero_()
        b.grad.zero_()

    epochs.append(epoch)
    losses.append(loss.detach())
    accuracies.append(((y_pred - y).abs() < 0.2).float().mean().item())

plt.subplot(1, 2, 1)
plt.plot(epochs, losses)
plt.xlabel("Epoch")
plt.ylabel("Loss")

plt.subplot(1, 2, 2)
plt.plot(epochs, accuracies)
plt.xlabel("Epoch")
plt.ylabel("Accuracy")
plt.show()
