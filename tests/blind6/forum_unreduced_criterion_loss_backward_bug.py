# Source: https://discuss.pytorch.org/t/runtimeerror-grad-can-be-implicitly-created-only-for-scalar-outputs/21217
"""The forum thread "RuntimeError: grad can be implicitly created only for scalar outputs": the
poster's `loss = criterion(pred, label)` is not a scalar and `loss.backward()` raises the error. The
answer: "I assume you are not summing up / reducing the loss-value in any other (manual) way? You
should be able to do loss = criterion(pred, label); loss.backward(torch.ones_like(loss))".
Reconstructed (the stored thread keeps the answer only): an unreduced BCE criterion over the masks
of a small segmentation net, trained on random images and masks."""
import torch
import torch.nn as nn


class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
            nn.Conv2d(8, 1, 3, padding=1),
        )

    def forward(self, x):
        return self.body(x)


model = SegNet()
criterion = nn.BCEWithLogitsLoss(reduction='none')
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for epoch in range(2):
    image = torch.randn(2, 3, 16, 16)
    label = (torch.rand(2, 1, 16, 16) > 0.5).float()
    optimizer.zero_grad()
    pred = model(image)
    loss = criterion(pred, label)
    loss.backward()  # expect: GG105
    optimizer.step()
