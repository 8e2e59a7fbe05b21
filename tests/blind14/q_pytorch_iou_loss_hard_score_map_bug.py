# Source: https://github.com/pytorch/pytorch/issues/2774
"""A custom `_Loss` to minimize 1 - IoU between a predicted and a target rectangle, each given by its
four vertices: `IoU_real` builds a score map over a fixed pixel grid, 1 where the grid point lies
inside the rectangle's bounds and 0 elsewhere (comparisons `>=`/`<=` against the coordinates), and
takes intersection and union as sums of products of the maps. Comparisons are not differentiable:
the map carries no graph. In 2017 (Variables) the reporter saw no error but None gradients
everywhere; torch 2.13 raises "element 0 of tensors does not require grad and does not have a
grad_fn" at `loss.backward()`. Fix: a soft score map (sigmoids of the signed distances to the
bounds), which is differentiable. The 224x224 grid is 16x16, the network a tiny CNN head on random
images; matplotlib plotting is left out.
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
        inside = (gx >= x_min) & (gx <= x_max) & (gy >= y_min) & (gy <= y_max)
        return inside.float()

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
    loss.backward()  # expect: GG104
    print(it, loss.item(), [p.grad is None for p in model.parameters()])
    optimizer.step()
