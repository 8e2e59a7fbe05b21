# Source: https://deepinout.com/pytorch/pytorch-questions/75_pytorch_runtime_error_element_0_of_tensors_does_not_require_grad_and_does_not_have_a_grad_fn.html
"""The fix: keep the loss in tensor operations, so the graph is not cut (the post's advice).
The Dice loss is written with torch (sigmoid, products and sums on the tensors themselves) and the
backward reaches the conv weights."""
import torch
import torch.nn as nn


def dice_loss(logits, target, eps=1e-6):
    p = torch.sigmoid(logits)
    inter = (p * target).sum()
    dice = (2 * inter + eps) / (p.sum() + target.sum() + eps)
    return 1.0 - dice


model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(2):
    images = torch.randn(2, 1, 16, 16)
    masks = (torch.rand(2, 1, 16, 16) > 0.5).float()
    optimizer.zero_grad()
    loss = dice_loss(model(images), masks)
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())
