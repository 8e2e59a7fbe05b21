# Source: https://blog.csdn.net/ZwaterZ/article/details/126193284
"""The right fix (the post's `loss.requires_grad_(True)` silences the error but leaves every
parameter without a gradient, so nothing trains): freeze the pretrained model first, then replace
the classifier, whose new parameters require grad; the optimizer is given those."""
import torch
import torch.nn as nn


def set_parameter_requires_grad(model, feature_extracting):
    if feature_extracting:
        for param in model.parameters():
            param.requires_grad = False


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(8, 1000)

    def forward(self, x):
        return self.fc(self.features(x))


model = Backbone()
set_parameter_requires_grad(model, feature_extracting=True)
model.fc = nn.Linear(8, 4)
LOSS = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01)

for epoch in range(2):
    images = torch.randn(4, 3, 16, 16)
    label = torch.randint(0, 4, (4,))
    optimizer.zero_grad()
    out = model(images)
    loss = LOSS(out, label)
    loss.backward()
    optimizer.step()
