# Source: https://discuss.pytorch.org/t/guidelines-for-when-and-why-one-should-set-inplace-true/50923
"""The forum thread "Guidelines for when and why one should set inplace=True" (ReLU as the
example). The answers: use `inplace=True` for memory "unless it breaks", and the two things to
avoid are an in-place op on a leaf that requires grad, and an in-place op "when the operation
before the inplace wants to have its result to compute the backward". Reconstructed as the second
case in a small CNN built by the rule of thumb: every ReLU is `inplace=True`, and the classifier
head starts with its own ReLU right after the feature extractor's last ReLU, which saved its
output; the head's ReLU overwrites it (same values, new version) and the backward raises."""
import torch
import torch.nn as nn


class SmallCNN(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
        )
        self.classifier = nn.Sequential(
            nn.ReLU(inplace=True), nn.Flatten(), nn.Linear(16 * 4 * 4, n_classes),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


model = SmallCNN(n_classes=5)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
criterion = nn.CrossEntropyLoss()

for step in range(3):
    images = torch.randn(8, 3, 8, 8)
    labels = torch.randint(0, 5, (8,))
    optimizer.zero_grad()
    loss = criterion(model(images), labels)
    loss.backward()  # expect: GG103
    optimizer.step()
    print(step, loss.item())
