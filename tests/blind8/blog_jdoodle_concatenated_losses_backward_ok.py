# Source: https://tjhub.jdoodle.com/post/runtimeerror-grad-can-be-implicitly-created-only-for-scalar
"""The post's fix: make the loss a single scalar before the backward; the two task losses are
added (`cls_loss + reg_loss`) instead of concatenated."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiTaskNet(nn.Module):
    def __init__(self, n_in, n_classes):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU())
        self.cls_head = nn.Linear(32, n_classes)
        self.reg_head = nn.Linear(32, 1)

    def forward(self, x):
        h = self.body(x)
        return self.cls_head(h), self.reg_head(h).squeeze(1)


def compute_losses(model, x, labels, targets):
    logits, value = model(x)
    cls_loss = F.cross_entropy(logits, labels)
    reg_loss = F.mse_loss(value, targets)
    return cls_loss + reg_loss


model = MultiTaskNet(n_in=8, n_classes=4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for step in range(3):
    x = torch.randn(32, 8)
    labels = torch.randint(0, 4, (32,))
    targets = torch.randn(32)
    loss = compute_losses(model, x, labels, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
