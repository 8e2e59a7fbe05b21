# Source: https://runebook.dev/en/docs/pytorch/generated/torch.tensor.is_leaf
"""Saliency map read from ``.grad`` of the leaf raw images (fixed).

The page's first ``is_leaf`` problem: the ``.grad`` of a tensor created by an
operation is ``None`` after ``backward()`` even though it took part in the
computation, because only leaf tensors get ``.grad`` populated.  Here a small
image classifier is trained, and then a vanilla-gradient saliency map is
computed: the raw images get ``requires_grad_()``, are normalized with the
dataset mean/std (``inputs = (images - MEAN) / STD``, a non-leaf), the class
score is backpropagated, and the saliency is read from ``inputs.grad``.  Torch
warns that a non-leaf ``.grad`` is being accessed and returns ``None``, and
``.abs()`` on it raises ``AttributeError``.

Fixed here with the page's first solution: the saliency is read from the
leaf ``images.grad`` (``inputs.retain_grad()`` would also work).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

MEAN, STD = 0.5, 0.25


class SmallCNN(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, n_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


images_train = torch.rand(32, 1, 16, 16)
labels_train = torch.randint(0, 4, (32,))

model = SmallCNN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model((images_train - MEAN) / STD), labels_train)
    loss.backward()
    optimizer.step()


def saliency_map(model, images, target):
    model.eval()
    images = images.clone().requires_grad_()
    inputs = (images - MEAN) / STD
    scores = model(inputs)
    scores.gather(1, target.view(-1, 1)).sum().backward()
    return images.grad.abs().amax(dim=1)


sal = saliency_map(model, images_train[:4], labels_train[:4])
print(sal.shape)
