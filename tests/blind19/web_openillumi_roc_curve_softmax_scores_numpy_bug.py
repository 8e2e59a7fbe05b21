# Source: https://openillumi.com/en/en-pytorch-sklearn-roc-curve-fix-probability
"""ROC curve of a PyTorch classifier built from softmax scores converted with ``.numpy()``.

The article's user plotted an ROC curve from ``torch.max(output, dim=1)``
labels and got a concave curve; the fix is to hand the ROC routine the
positive-class probability ``F.softmax(output, dim=1)[:, 1]`` instead.  This
program follows that advice but converts the scores with a bare ``.numpy()``:
the evaluation forward pass runs with autograd on, so the probabilities are
part of the graph (``requires_grad=True``) and torch refuses with "Can't call
numpy() on Tensor that requires grad".

Fix (the article's own conversion line): ``probabilities.detach().numpy()``;
running the evaluation forward under ``torch.no_grad()`` works as well.  The
ROC points are computed with a small numpy routine standing in for
``sklearn.metrics.roc_curve``.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def roc_curve(y_true, y_score):
    """Minimal stand-in for sklearn.metrics.roc_curve (thresholds at every score)."""
    order = np.argsort(-y_score)
    y_true = y_true[order]
    tps = np.cumsum(y_true)
    fps = np.cumsum(1 - y_true)
    tpr = np.concatenate([[0.0], tps / max(tps[-1], 1)])
    fpr = np.concatenate([[0.0], fps / max(fps[-1], 1)])
    return fpr, tpr, y_score[order]


# two Gaussian blobs, label 1 = positive class
n = 200
X = torch.cat([torch.randn(n, 2) + 1.5, torch.randn(n, 2) - 1.5])
y = torch.cat([torch.ones(n, dtype=torch.long), torch.zeros(n, dtype=torch.long)])

model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(50):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(X), y)
    loss.backward()
    optimizer.step()

# evaluation: probability of the positive class, as the article recommends
output = model(X)
probabilities = F.softmax(output, dim=1)[:, 1]
y_score = probabilities.numpy()  # expect: GG107
nn_fpr, nn_tpr, nn_thresholds = roc_curve(y.numpy(), y_score)
auc = np.trapezoid(nn_tpr, nn_fpr)
print("AUC:", round(float(auc), 4))
