# Source: https://wenku.csdn.net/answer/275quvare2
"""The user's training script with the answer's fix: the weighted cross-entropy module reduces the
per-sample losses times the class weights to their mean, so train_one_epoch backwards a scalar.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class WeightedCE(nn.Module):
    def __init__(self, class_weights):
        super().__init__()
        self.register_buffer("w", class_weights)

    def forward(self, logits, target):
        per_sample = F.cross_entropy(logits, target, reduction="none")
        return (per_sample * self.w[target]).mean()


class Classifier(nn.Module):
    def __init__(self, n_in, n_cls):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, 16), nn.ReLU(), nn.Linear(16, n_cls))

    def forward(self, x):
        return self.net(x)


def make_batches(n_batches, bs, n_in, n_cls):
    return [(torch.randn(bs, n_in), torch.randint(0, n_cls, (bs,))) for _ in range(n_batches)]


def train_one_epoch(model, criterion, optimizer, batches):
    total = 0.0
    for inputs, labels in batches:
        optimizer.zero_grad()
        loss = criterion(model(inputs), labels)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total


model = Classifier(6, 3)
criterion = WeightedCE(torch.tensor([1.0, 2.0, 0.5]))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    print(epoch, train_one_epoch(model, criterion, optimizer, make_batches(3, 8, 6, 3)))
