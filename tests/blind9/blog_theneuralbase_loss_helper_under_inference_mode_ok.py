# Source: https://theneuralbase.com/pytorch/learn/beginner/torch-no-grad-disabling-gradient-tracking/
"""The note's rule: inference mode only around pure inference. The loss helper runs with grad
enabled; the validation loop wraps its calls in torch.inference_mode()."""
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))

    def forward(self, x):
        return self.net(x)


criterion = nn.CrossEntropyLoss()


def compute_loss(model, x, y):
    return criterion(model(x), y)


def validate(model, batches):
    model.eval()
    with torch.inference_mode():
        total = sum(compute_loss(model, x, y).item() for x, y in batches)
    model.train()
    return total / len(batches)


model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
val_batches = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(2)]

for epoch in range(2):
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    optimizer.zero_grad()
    loss = compute_loss(model, x, y)
    loss.backward()
    optimizer.step()
    print(epoch, loss.item(), validate(model, val_batches))
