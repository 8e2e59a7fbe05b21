# Source: https://discuss.pytorch.org/t/model-freeze-explanation-transfer-learning/76284
"""Transfer learning with ``freeze_net_layers`` (fixed: freeze only the backbone).

Calling the helper on the whole network left no parameter requiring grad, so
``loss.backward()`` raised "element 0 of tensors does not require grad".
Fix, as the repo the poster quotes does: freeze only ``net.base_net`` and hand
the optimizer the parameters that stay trainable.
"""
import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def freeze_net_layers(net):
    for param in net.parameters():
        param.requires_grad = False


class TinyDetector(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.base_net = nn.Sequential(  # "pretrained" backbone
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
        )
        self.extras = nn.Sequential(nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.ReLU())
        self.classification_header = nn.Conv2d(16, num_classes, 1)
        self.regression_header = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        f = self.extras(self.base_net(x))
        return self.classification_header(f), self.regression_header(f)


net = TinyDetector()
freeze_net_layers(net.base_net)  # freeze only the pretrained backbone
params = itertools.chain(
    net.extras.parameters(),
    net.classification_header.parameters(),
    net.regression_header.parameters(),
)
optimizer = torch.optim.SGD(params, lr=0.01, momentum=0.9)

images = torch.randn(2, 3, 16, 16)
cls_target = torch.randint(0, 4, (2, 4, 4))
box_target = torch.randn(2, 4, 4, 4)

for step in range(2):
    optimizer.zero_grad()
    confidence, locations = net(images)
    loss = F.cross_entropy(confidence, cls_target) + F.smooth_l1_loss(locations, box_target)
    loss.backward()
    optimizer.step()
    print(step, loss.item())
