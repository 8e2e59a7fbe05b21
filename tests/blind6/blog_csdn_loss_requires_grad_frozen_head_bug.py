# Source: https://blog.csdn.net/ZwaterZ/article/details/126193284
"""The CSDN post on "RuntimeError: element 0 of tensors does not require grad and does not have a
grad_fn" at `loss.backward()`: the author concludes that the loss `l = LOSS(out, label)` "does not
require grad by default" and adds `loss.requires_grad_(True)` before the backward. A loss whose
inputs come from trainable parameters always has a grad_fn; here no parameter requires grad: a
feature-extraction fine-tuning script replaces the classifier first and freezes the model after,
so the new head is frozen too. The cause is reconstructed (the post shows the backward line and
its change only); the backbone is a small conv net, the data random."""
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
model.fc = nn.Linear(8, 4)
set_parameter_requires_grad(model, feature_extracting=True)
LOSS = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for epoch in range(2):
    images = torch.randn(4, 3, 16, 16)
    label = torch.randint(0, 4, (4,))
    optimizer.zero_grad()
    out = model(images)
    loss = LOSS(out, label)
    loss.backward()  # expect: GG104
    optimizer.step()
