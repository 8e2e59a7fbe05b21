# Source: https://discuss.pytorch.org/t/custom-loss-function-iou-is-not-differentiable-can-you-create-a-differentiable-iou-loss-function-for-ml/148899
"""Forum thread "Custom loss function IoU is not differentiable", with the differentiable IoU the
thread asks for: the loss module keeps the model's outputs as sigmoid probabilities (no hard
threshold), takes the soft intersection p*t and soft union p + t - p*t, and returns 1 - IoU, so
`loss.backward()` reaches the Linear layer's weights. The user's `torch.tensor(0, 1001, 256)` inputs
are written as the random tensors they meant.
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
        inputs = torch.sigmoid(inputs)
        targets = targets.float()
        batch_size = targets.shape[0]

        intersect = inputs * targets
        intersect = intersect.view(batch_size, -1).sum(-1)

        union = inputs + targets - inputs * targets
        union = union.view(batch_size, -1).sum(-1)

        IoU = (intersect + smooth) / (union + smooth)
        IoU = IoU.mean()

        return 1 - IoU


x = torch.randint(0, 1001, (4, 256)).float()  # e.g. [0, 200, 30, 1000, ...]
true = torch.randint(0, 2, (4, 256))  # e.g. [0, 1, 1, 0, 1, ...]

model = nn.Linear(256, 256)
criterion = IoU()

output = model(x)
loss = criterion(output, true, smooth=1.0)
loss.backward()

print(f"loss ={loss}")
print(f"model weight: {model.weight.grad.norm()}")
