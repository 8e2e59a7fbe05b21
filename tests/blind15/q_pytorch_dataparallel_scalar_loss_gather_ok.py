# Source: https://github.com/pytorch/pytorch/issues/9811
"""Fixed twin of q_pytorch_dataparallel_scalar_loss_gather_bug.py. A model computing its own
`CrossEntropyLoss` inside `forward`, wrapped in `DataParallel`: the replicas' 0-d losses come back
as a vector (torch 2.13; in 0.4 the gather failed) and `loss.backward()` raised. Fix (the reporter's
workaround in the thread): the criterion is built with `reduce=False` (`reduction='none'`), so each
replica returns its per-sample losses, DataParallel concatenates them along the batch, and the
training step averages them before the backward. DataParallel is a CPU stand-in written in the file.
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
        self.loss = torch.nn.CrossEntropyLoss(reduction='none')

    def forward(self, data, target):
        return self.loss(self.classifier(data), target)


torch.manual_seed(0)
m = DataParallel(Model())
optimizer = torch.optim.SGD(m.parameters(), lr=0.1)
for step in range(2):
    data = torch.randn(8, 16)      # get tensor for data
    target = torch.randint(0, 5, (8,))  # get tensor for target
    optimizer.zero_grad()
    loss = m(data, target).mean()
    loss.backward()
    optimizer.step()
    print(step, loss)
