# Source: https://tjhub.jdoodle.com/post/runtimeerror-grad-can-be-implicitly-created-only-for-scalar
"""The post "RuntimeError: grad can be implicitly created only for scalar outputs: A Deep Dive into
PyTorch Errors": the error appears when `loss.backward()` is called on a loss with more than one
element, "if your loss function is calculating multiple separate losses ... PyTorch doesn't know
how to combine these into a single gradient"; its example backwards `torch.cat([x, y])`. A
multi-task model whose two loss terms (classification and regression) are concatenated into one
`loss` tensor, as the post describes, and backwarded as they are."""
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
    return torch.cat([cls_loss.view(1), reg_loss.view(1)])


model = MultiTaskNet(n_in=8, n_classes=4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

for step in range(3):
    x = torch.randn(32, 8)
    labels = torch.randint(0, 4, (32,))
    targets = torch.randn(32)
    loss = compute_losses(model, x, labels, targets)
    optimizer.zero_grad()
    loss.backward()  # expect: GG105
    optimizer.step()
    print(step, loss.tolist())
