# Source: https://deepinout.com/pytorch/pytorch-questions/75_pytorch_runtime_error_element_0_of_tensors_does_not_require_grad_and_does_not_have_a_grad_fn.html
"""The post on "RuntimeError: element 0 of tensors does not require grad and does not have a
grad_fn" gives as first cause a gradient chain cut in the middle of the graph by converting a
tensor to a NumPy array or a Python number (`.numpy()`, `.item()`) and building the loss from that
value. Here a segmentation training loop does it in the usual way: its Dice loss is computed with
NumPy on the detached predictions and wrapped back with torch.tensor, so the loss has no grad_fn
and `loss.backward()` raises. Small conv net, random images and masks."""
import numpy as np
import torch
import torch.nn as nn


def dice_loss(logits, target, eps=1e-6):
    p = torch.sigmoid(logits).detach().numpy()
    t = target.numpy()
    inter = (p * t).sum()
    dice = (2 * inter + eps) / (p.sum() + t.sum() + eps)
    return torch.tensor(1.0 - dice)


model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(2):
    images = torch.randn(2, 1, 16, 16)
    masks = (torch.rand(2, 1, 16, 16) > 0.5).float()
    optimizer.zero_grad()
    loss = dice_loss(model(images), masks)
    loss.backward()  # expect: GG104
    optimizer.step()
    print(epoch, loss.item())
