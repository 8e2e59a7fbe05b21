"""A generator function slices minibatches out of a feature matrix that a learned projection
produced once, up front: the first minibatch's backward frees the projection's graph that all the
slices share."""
import torch
import torch.nn as nn

raw = torch.randn(24, 6)
labels = (raw[:, 0] > 0).long()
projection = nn.Linear(6, 6)
features = torch.relu(projection(raw))


def minibatches(x, y, size):
    perm = torch.arange(len(x))
    for i in range(0, len(x), size):
        idx = perm[i:i + size]
        yield x[idx], y[idx]


clf = nn.Linear(6, 2)
opt = torch.optim.Adam([*clf.parameters(), *projection.parameters()], lr=1e-2)
for epoch in range(2):
    for xb, yb in minibatches(features, labels, 8):
        loss = nn.functional.cross_entropy(clf(xb), yb)
        opt.zero_grad()
        loss.backward()  # expect: GG101
        opt.step()
