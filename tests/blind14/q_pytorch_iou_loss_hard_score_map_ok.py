# Source: https://github.com/pytorch/pytorch/issues/2774
"""Fixed twin of q_pytorch_iou_loss_hard_score_map_bug.py. The reporter's `IoU_real` loss built its
rectangle score maps from comparisons against the predicted coordinates, which carry no graph: the
gradients were None (2017) and torch 2.13 raises "element 0 of tensors does not require grad" at
`loss.backward()`. The fix applied here is the right one (the thread's own answer is not
reproduced): it makes the score map soft, the product of sigmoids of the signed distances of
each grid point to the four bounds (sharpness 4), so intersection and union are differentiable in
the coordinates. The 224x224 grid is 16x16, the network a tiny CNN head on random images.
"""
import numpy
import torch
import torch.nn as nn
from torch.autograd import Variable
from torch.nn.modules.loss import _Loss


class IoU_real(_Loss):
    def __init__(self, bounds=(16, 16)):
        super(_Loss, self).__init__()
        # define the grid
        grid = numpy.mgrid[0:bounds[0], 0:bounds[1]]
        self.grid = numpy.concatenate((grid[0][..., numpy.newaxis], grid[1][..., numpy.newaxis]), axis=-1)
        self.grid = Variable(torch.FloatTensor(self.grid.astype(numpy.float32)), requires_grad=False)

    def score_map(self, vertexes):
        # vertexes: (batch, 4, 2) -> axis-aligned bounds of each rectangle
        x_min = vertexes[:, :, 0].min(1)[0].view(-1, 1, 1)
        x_max = vertexes[:, :, 0].max(1)[0].view(-1, 1, 1)
        y_min = vertexes[:, :, 1].min(1)[0].view(-1, 1, 1)
        y_max = vertexes[:, :, 1].max(1)[0].view(-1, 1, 1)
        gx = self.grid[..., 0].unsqueeze(0)
        gy = self.grid[..., 1].unsqueeze(0)
        k = 4.0  # sharpness of the soft bounds
        inside = (torch.sigmoid(k * (gx - x_min)) * torch.sigmoid(k * (x_max - gx))
                  * torch.sigmoid(k * (gy - y_min)) * torch.sigmoid(k * (y_max - gy)))
        return inside

    def forward(self, input, target):
        pred_map = self.score_map(input.view(-1, 4, 2))
        target_map = self.score_map(target.view(-1, 4, 2))
        intersection = (pred_map * target_map).sum(2).sum(1)
        union = (pred_map + target_map - pred_map * target_map).sum(2).sum(1)
        return (1 - intersection / union.clamp(min=1)).mean()


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return 8 + 6 * torch.tanh(self.fc(self.features(x)))  # 4 vertexes inside the 16x16 grid


torch.manual_seed(0)
model = Regressor()
criterion = IoU_real()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

images = torch.randn(4, 3, 16, 16)
corners = torch.tensor([[3., 3., 3., 11., 11., 3., 11., 11.]]).repeat(4, 1)

for it in range(3):
    optimizer.zero_grad()
    output = model(Variable(images))
    loss = criterion(output, Variable(corners))
    loss.backward()
    print(it, loss.item(), [p.grad is None for p in model.parameters()])
    optimizer.step()
