# Source: https://taourl.com/read-2220112.html
"""The Q&A digest on "element 0 of tensors does not require grad and does not have a grad_fn" in
transfer learning: a pretrained ResNet is frozen and its `fc` replaced for a new task. Here the
fine-tuning script builds the new head first and then runs its freezing helper over the whole
model, so the new `fc` is frozen too; the loss has no grad_fn and `loss.backward()` raises
(torchvision's resnet18 replaced by a small stand-in). Fix from the digest: only the new head
trains: freeze the backbone before replacing `fc` (and hand the optimizer `model.fc.parameters()`).
"""
import torch
import torch.nn as nn


class TinyResNet(nn.Module):
    """Stand-in for torchvision.models.resnet18: a conv stem, one residual block, pool, fc."""

    def __init__(self, num_classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.block(x))
        return self.fc(torch.flatten(self.pool(x), 1))


def load_pretrained():
    return TinyResNet()


def freeze(module):
    for param in module.parameters():
        param.requires_grad = False


def build_finetune_model(num_classes):
    model = load_pretrained()
    num_ftrs = model.fc.in_features
    model.fc = nn.Linear(num_ftrs, num_classes)
    freeze(model)
    return model


model = build_finetune_model(10)
optimizer = torch.optim.SGD([p for p in model.parameters()], lr=0.001)
criterion = nn.CrossEntropyLoss()
for step in range(2):
    inputs = torch.randn(4, 3, 16, 16)
    labels = torch.randint(0, 10, (4,))
    optimizer.zero_grad()
    loss = criterion(model(inputs), labels)
    loss.backward()  # expect: GG104
    optimizer.step()
    print(step, loss.item())
