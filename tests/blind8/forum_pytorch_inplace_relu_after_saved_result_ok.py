# Source: https://discuss.pytorch.org/t/guidelines-for-when-and-why-one-should-set-inplace-true/50923
"""The thread's rule applied: an in-place op must not overwrite a result that the previous op
needs for its backward. The head's ReLU directly follows the features' ReLU, whose output is
saved, so it goes back to the default `inplace=False`; the other ReLUs (after BatchNorm, which
saves its input, not its output) keep `inplace=True`."""
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
            nn.ReLU(), nn.Flatten(), nn.Linear(16 * 4 * 4, n_classes),
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
    loss.backward()
    optimizer.step()
    print(step, loss.item())
