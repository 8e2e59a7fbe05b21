# Source: https://runebook.dev/ru/docs/pytorch/autograd
"""The feature-visualization script with the fix (no in-place change of a leaf that autograd
tracks): the gradient-ascent step on the image runs under `torch.no_grad()`, then the image's
gradient is cleared.
"""
import torch
import torch.nn as nn


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)

    def forward(self, x):
        return self.conv2(torch.relu(self.conv1(x)))


def channel_score(model, img, channel):
    return model(img)[0, channel].mean()


def ascent_step(img, lr):
    with torch.no_grad():
        grad = img.grad / (img.grad.abs().mean() + 1e-8)
        img += lr * grad
    img.grad.zero_()


torch.manual_seed(0)
model = SmallCNN().eval()
for p in model.parameters():
    p.requires_grad_(False)
img = torch.rand(1, 3, 16, 16, requires_grad=True)
for it in range(5):
    score = channel_score(model, img, channel=3)
    score.backward()
    ascent_step(img, lr=0.05)
    print(it, score.item())
