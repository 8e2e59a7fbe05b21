# Source: https://runebook.dev/en/docs/pytorch/generated/torch.tensor.backward
"""Regression training loop that calls ``backward()`` on a per-sample weighted loss that was never reduced.

The page's most common ``Tensor.backward()`` error: ``backward()`` is meant to
be called on a scalar loss, and calling it on "a loss for a batch of data that
hasn't been reduced to a single value" raises "grad can be implicitly created
only for scalar outputs".  Here a house-price regressor weights each sample's
squared error by a per-sample confidence with a hand-written
``weighted_mse`` that returns the (batch, 1) tensor of weighted errors, and the
training step calls ``loss.backward()`` on it directly.

Fix (the page's "correct way"): reduce the batch loss first, e.g.
``loss.mean().backward()`` (see the _ok twin).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def weighted_mse(pred, target, weights):
    # one weighted squared error per sample
    return weights * (pred - target) ** 2


class PriceRegressor(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_features, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


n_samples, n_features = 200, 8
features = torch.randn(n_samples, n_features)
prices = features @ torch.randn(n_features, 1) + 0.1 * torch.randn(n_samples, 1)
confidence = torch.rand(n_samples, 1)

model = PriceRegressor(n_features)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
batch_size = 32

for epoch in range(3):
    perm = torch.randperm(n_samples)
    for start in range(0, n_samples, batch_size):
        idx = perm[start:start + batch_size]
        outputs = model(features[idx])
        loss = weighted_mse(outputs, prices[idx], confidence[idx])
        optimizer.zero_grad()
        loss.backward()  # expect: GG105
        optimizer.step()
    print(f"epoch {epoch}: last batch loss {loss.mean().item():.4f}")
