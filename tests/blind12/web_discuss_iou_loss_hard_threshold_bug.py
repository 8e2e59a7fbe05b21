# Source: https://discuss.pytorch.org/t/custom-loss-function-iou-is-not-differentiable-can-you-create-a-differentiable-iou-loss-function-for-ml/148899
"""Forum thread "Custom loss function IoU is not differentiable": for a 1-D peak detector the user
writes an IoU loss module that thresholds the model's outputs with `torch.where(inputs < thresh, 0, 1)`
and counts the intersection and union with logical_and; `loss.backward()` raises "element 0 of
tensors does not require grad and does not have a grad_fn" (the thresholded integers carry no graph).
The user's `torch.tensor(0, 1001, 256)` inputs are written as the random tensors they meant. Fix
(what the thread asks for): a soft, differentiable IoU on sigmoid probabilities, minimised as 1 - IoU.
"""
from typing import Optional

import torch
import torch.nn as nn
from torch import Tensor


class IoU(nn.Module):
    def __init__(self, thresh: float = 0.5):
        super().__init__()
        self.thresh = thresh

    def forward(self, inputs: torch.Tensor, targets: torch.Tensor, weights: Optional[torch.Tensor] = None, smooth: float = 0.0) -> Tensor:
        inputs = torch.where(inputs < self.thresh, 0, 1)
        batch_size = targets.shape[0]

        intersect = torch.logical_and(inputs, targets)
        intersect = intersect.view(batch_size, -1).sum(-1)

        union = torch.logical_and(inputs, targets)
        union = union.view(batch_size, -1).sum(-1)

        IoU = (intersect + smooth) / (union + smooth)
        IoU = IoU.mean()

        return IoU


x = torch.randint(0, 1001, (4, 256)).float()  # e.g. [0, 200, 30, 1000, ...]
true = torch.randint(0, 2, (4, 256))  # e.g. [0, 1, 1, 0, 1, ...]

model = nn.Linear(256, 256)
criterion = IoU()

output = model(x)
loss = criterion(output, true, smooth=1.0)
loss.backward()  # expect: GG104

print(f"loss ={loss}")
print(f"model weight: {model.weight.grad}")
