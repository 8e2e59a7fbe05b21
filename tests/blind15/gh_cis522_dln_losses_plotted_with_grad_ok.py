# Source: https://github.com/CIS-522/course-content/pull/2
"""CIS-522 W2D1 tutorial (deep linear networks), with the PR's fix: section 4's loop appends
`l.detach()` to `losses`, as sections 3 and 3.5 do, so the loss curve `plt.plot(range(num_epochs),
losses)` converts plain tensors. tqdm and matplotlib stand-ins as in the `_bug`.
"""
import time

import numpy as np
import torch
import torch.nn as nn


# ---- tqdm / matplotlib stand-ins ----
class trange(object):
    def __init__(self, n, desc="", leave=True):
        self.n, self.desc = n, desc

    def __iter__(self):
        return iter(range(self.n))

    def set_description(self, desc):
        self.desc = desc

    def refresh(self):
        pass


class plt(object):
    @staticmethod
    def figure(*args, **kwargs):
        pass

    @staticmethod
    def subplot(*args):
        pass

    @staticmethod
    def plot(x, y, *args, **kwargs):
        x = np.atleast_1d(x)
        y = np.atleast_1d(y)
        return [(x.shape, y.shape)]

    @staticmethod
    def scatter(x, y, **kwargs):
        return np.atleast_1d(x), np.atleast_1d(y)

    @staticmethod
    def xlabel(s):
        pass

    @staticmethod
    def ylabel(s):
        pass

    @staticmethod
    def title(s):
        pass

    @staticmethod
    def legend():
        pass

    @staticmethod
    def show():
        pass


# @title Helper functions
def synthetic_dataset(w, b, num_examples=1000, sigma=0.01, seed=2021):
    """Synthetic data generator in the form: y = Xw + b + gaussian_noise(0, sigma)."""
    torch.manual_seed(seed)
    X = torch.normal(0, 1, (w.shape[0], num_examples))
    y = torch.matmul(w.T, X) + b
    # Add gaussian noise
    y += torch.normal(0, sigma, y.shape)
    return X, y.reshape((-1, 1))


def linear_regression(X, w, b):
    """Linear regression model."""
    reg = w.T @ X + b
    return reg


def squared_error(y_hat, y):
    """Squared error loss function."""
    err = (y_hat - y) ** 2 / 2
    return err


def gradient_descent(w, b, lr):
    """gradient_descent algorithm."""
    with torch.no_grad():
        w -= w.grad * lr
        b -= b.grad * lr
        # Set gradient to zero to flush the cache
        w.grad.zero_()
        b.grad.zero_()
    return (w, b)


# ---- section 3: linear regression from scratch ----
original_w = torch.tensor([1.2]).reshape(-1, 1)
original_b = 0.7
N = 100
X, y = synthetic_dataset(original_w, original_b, num_examples=N)

lr = 1e-2  # learning rate
num_epochs = 30  # number of epochs (updates)
net = linear_regression
loss = squared_error

y_train = y.squeeze()  # to avoid wrong broadcasting

w = torch.zeros(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)

losses = []

epoch_range = trange(num_epochs, desc="loss: ", leave=True)

for epoch in epoch_range:
    if losses:
        epoch_range.set_description("loss: {:.6f}".format(losses[-1]))
        epoch_range.refresh()  # to show immediately the update

    y_hat = net(X, w, b)
    l = loss(y_hat, y_train).mean()  # Loss in `X` and `y`

    # Compute gradient on `l` with respect to `w`, `b`
    l.backward()
    w, b = gradient_descent(w, b, lr)  # Update parameters using their gradient

    losses.append(l.detach())

    time.sleep(0.001)

w_train = w
b_train = b
y_hat = net(X, w_train, b_train).reshape(-1, 1)

plt.figure(figsize=(14, 5))
plt.subplot(1, 2, 1)
plt.plot(range(num_epochs), losses)
plt.xlabel("epoch")
plt.ylabel("loss (a.u.)")
plt.subplot(1, 2, 2)
plt.scatter(X, y_train, label="original data")
plt.plot(X.reshape(-1, 1), y_hat.detach(), label="regression", color="red", linewidth=3.0)
plt.legend()
plt.show()

# ---- section 4: more dimensions than data ----
# Generate a second dataset with D>>N
original_w = torch.randn(200, 1).reshape(-1, 1)
original_b = 1.2
N = 10  # number of examples
X, y = synthetic_dataset(original_w, original_b, num_examples=N, sigma=0.5)

print(f"The dataset has N={X.shape[1]} examples in the {X.shape[0]}D space!")

# Model construction
net = nn.Sequential(nn.Linear(X.shape[0], 1))

# Parameter initialization to zero
net[0].weight.data.fill_(0)
net[0].bias.data.fill_(0)
print(net[0].weight.shape)

loss = nn.MSELoss()

optimizer = torch.optim.SGD(net.parameters(), lr=1e-2)

losses = []

epoch_range = trange(num_epochs, desc="loss: ", leave=True)

for epoch in epoch_range:
    if losses:
        epoch_range.set_description("loss: {:.6f}".format(losses[-1]))
        epoch_range.refresh()  # to show immediately the update

    l = loss(net(X.T), y)
    l.backward()
    optimizer.step()
    optimizer.zero_grad()
    l = loss(net(X.T), y)
    losses.append(l.detach())

y_hat = net(X.T).reshape(-1, 1)

plt.figure()
plt.plot(range(num_epochs), losses)
plt.xlabel("epoch")
plt.ylabel("loss (a.u.)")
plt.show()
