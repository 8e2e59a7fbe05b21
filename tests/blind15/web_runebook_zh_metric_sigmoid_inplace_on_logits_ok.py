# Source: https://runebook.dev/zh/docs/pytorch/generated/torch.tensor.sigmoid_
"""The multi-label training step with the page's safe alternative: the metrics helper computes the
probabilities with `torch.sigmoid(logits)` out of place, so the logits the loss saved stay intact.
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
    probs = torch.sigmoid(logits)
    preds = (probs > threshold).float()
    return {"acc": (preds == targets).float().mean().item(), "mean_prob": probs.mean().item()}


def train_step(model, criterion, opt, x, targets):
    logits = model(x)
    loss = criterion(logits, targets)
    metrics = batch_metrics(logits, targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item(), metrics


torch.manual_seed(0)
model = MultiLabelNet()
criterion = nn.BCEWithLogitsLoss()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, targets = torch.randn(32, 24), torch.randint(0, 2, (32, 5)).float()
for step in range(3):
    print(step, train_step(model, criterion, opt, x, targets))
