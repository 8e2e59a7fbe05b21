# Source: https://runebook.dev/zh/docs/pytorch/generated/torch.tensor.sigmoid_
"""The runebook.dev (zh) page on `Tensor.sigmoid_` warns that the in-place sigmoid overwrites values
autograd may still need, so a later backward raises "one of the variables needed for gradient
computation has been modified by an inplace operation"; its fix is never to use the in-place form on
tensors that take part in backpropagation. Here a multi-label classifier's training step computes
`BCEWithLogitsLoss` on the logits (which the loss saved) and then calls a metrics helper that turns
the same logits into probabilities with `logits.sigmoid_()` to save memory, before
`loss.backward()`. Fix (the page's safe alternative): `torch.sigmoid(logits)` out of place.
"""
import torch
import torch.nn as nn


class MultiLabelNet(nn.Module):
    def __init__(self, n_in=24, n_labels=5):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, n_labels))

    def forward(self, x):
        return self.net(x)


def batch_metrics(logits, targets, threshold=0.5):
    probs = logits.sigmoid_()
    preds = (probs > threshold).float()
    return {"acc": (preds == targets).float().mean().item(), "mean_prob": probs.mean().item()}


def train_step(model, criterion, opt, x, targets):
    logits = model(x)
    loss = criterion(logits, targets)
    metrics = batch_metrics(logits, targets)
    opt.zero_grad()
    loss.backward()  # expect: GG103
    opt.step()
    return loss.item(), metrics


torch.manual_seed(0)
model = MultiLabelNet()
criterion = nn.BCEWithLogitsLoss()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, targets = torch.randn(32, 24), torch.randint(0, 2, (32, 5)).float()
for step in range(3):
    print(step, train_step(model, criterion, opt, x, targets))
