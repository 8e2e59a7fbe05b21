"""Linear probe on a frozen backbone (requires_grad_(False)) whose features are cached once."""
import torch
import torch.nn as nn


class FeatureCache:
    def __init__(self, backbone, loader):
        self.items = [(backbone(images), labels) for images, labels in loader]

    def __iter__(self):
        return iter(self.items)


backbone = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
backbone.requires_grad_(False)
backbone.eval()
loader = [(torch.randn(4, 1, 8, 8), torch.randint(0, 3, (4,))) for _ in range(3)]
cache = FeatureCache(backbone, loader)
probe = nn.Linear(4, 3)
opt = torch.optim.SGD(probe.parameters(), lr=0.5)
for epoch in range(2):
    for feats, labels in cache:
        loss = nn.functional.cross_entropy(probe(feats), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
