# Source: https://github.com/pytorch/pytorch/issues/9811
"""A model that computes its own loss (`self.loss = torch.nn.CrossEntropyLoss()`, `forward(data, target)`
returns the 0-d loss) wrapped in `torch.nn.DataParallel` for several GPUs, trained with
`m(data, target)` then `.backward()`. In PyTorch 0.4 (the report) DataParallel could not gather the
replicas' 0-d outputs and raised in the forward. Torch 2.13 disagrees: DataParallel now warns ("all
input tensors were scalars; will instead unsqueeze and return a vector") and returns one loss per
replica, so the training step's `loss.backward()` raises "grad can be implicitly created only for
scalar outputs". Fix (the reporter's workaround, which the thread kept): `reduce=False`
(`reduction='none'`) in the criterion, so the replicas return per-sample losses that gather along
the batch, and average them before the backward. DataParallel is a CPU stand-in (two replicas,
scatter along dim 0, gather 0-d outputs into a vector as torch 2.13 does).
"""
import warnings

import torch
import torch.nn as nn

# ----------------------------- stand-in: torch.nn.DataParallel on two devices -----------------------------


class DataParallel(nn.Module):
    def __init__(self, module, device_ids=(0, 1)):
        super().__init__()
        self.module, self.device_ids = module, list(device_ids)

    def forward(self, *inputs):
        chunks = [x.chunk(len(self.device_ids)) for x in inputs]
        outputs = [self.module(*args) for args in zip(*chunks)]
        if all(o.dim() == 0 for o in outputs):
            warnings.warn('Was asked to gather along dimension 0, but all input tensors were scalars; '
                          'will instead unsqueeze and return a vector.')
            return torch.stack(outputs)
        return torch.cat(outputs, 0)

# ----------------------------- the reporter's model -----------------------------


class Model(nn.Module):
    def __init__(self, n_features=16, n_classes=5):
        super(Model, self).__init__()
        self.classifier = nn.Sequential(nn.Linear(n_features, 32), nn.ReLU(), nn.Linear(32, n_classes))
        self.loss = torch.nn.CrossEntropyLoss()

    def forward(self, data, target):
        return self.loss(self.classifier(data), target)


torch.manual_seed(0)
m = DataParallel(Model())
optimizer = torch.optim.SGD(m.parameters(), lr=0.1)
for step in range(2):
    data = torch.randn(8, 16)      # get tensor for data
    target = torch.randint(0, 5, (8,))  # get tensor for target
    optimizer.zero_grad()
    loss = m(data, target)
    loss.backward()  # expect: GG105
    optimizer.step()
    print(step, loss)
