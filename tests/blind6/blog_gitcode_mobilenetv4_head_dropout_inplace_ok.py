# Source: https://blog.gitcode.com/698d00443296b4fdd94b014496a42ce5.html
"""The post's fix: the dropout before the classifier is applied out of place,
`F.dropout(x, p=self.drop_rate, training=self.training)`, so ReluBackward0's saved output is left
as it was. Same backbone stand-in and training loop."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyMobileNetV4(nn.Module):
    """Stand-in for timm's MobileNetV4: conv stem/blocks, global pool, conv_head and its ReLU."""

    def __init__(self, num_features=32):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.blocks = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.conv_head = nn.Conv2d(16, num_features, 1)
        self.norm_head = nn.ReLU()
        self.num_features = num_features

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = self.norm_head(self.conv_head(self.global_pool(x)))
        return x.flatten(1)


class Classifier(nn.Module):
    def __init__(self, num_classes=5, drop_rate=0.2):
        super().__init__()
        self.backbone = TinyMobileNetV4()
        self.drop_rate = drop_rate
        self.fc = nn.Linear(self.backbone.num_features, num_classes)

    def forward(self, x):
        x = self.backbone(x)
        x = torch.nn.functional.dropout(x, p=self.drop_rate, training=self.training)
        return self.fc(x)


model = Classifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
model.train()
for step in range(3):
    images = torch.randn(4, 3, 32, 32)
    targets = torch.randint(0, 5, (4,))
    optimizer.zero_grad()
    loss = criterion(model(images), targets)
    loss.backward()
    optimizer.step()
    print(step, loss.item())
