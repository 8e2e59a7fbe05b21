"""Linear probe on a "frozen" backbone: a FeatureCache class extracts the features of every batch
once and keeps them; the backbone's parameters still require grad, so the cached features keep
their graphs and the second epoch walks them again."""
import torch
import torch.nn as nn


class FeatureCache:
    def __init__(self, backbone, loader):
        self.items = []
        for images, labels in loader:
            self.items.append((backbone(images), labels))

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)


backbone = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
backbone.eval()
loader = [(torch.randn(4, 1, 8, 8), torch.randint(0, 3, (4,))) for _ in range(3)]
cache = FeatureCache(backbone, loader)

probe = nn.Linear(4, 3)
opt = torch.optim.SGD(probe.parameters(), lr=0.5)
criterion = nn.CrossEntropyLoss()
for epoch in range(2):
    correct = 0
    for feats, labels in cache:
        logits = probe(feats)
        loss = criterion(logits, labels)
        opt.zero_grad()
        loss.backward()  # expect: GG101
        opt.step()
        correct += (logits.argmax(1) == labels).sum().item()
