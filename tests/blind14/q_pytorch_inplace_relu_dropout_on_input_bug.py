# Source: https://github.com/pytorch/pytorch/issues/727
"""The reporter's network begins with in-place activations, `F.relu(x, inplace=True)` followed by
`F.dropout(x, p=0.1, inplace=True)`, applied to the input Variable created with
`requires_grad=True` (they want the gradient with respect to the input). The reporter saw the
backward pass break; torch 2.13 refuses the first in-place op already: "a leaf Variable that
requires grad is being used in an in-place operation" at the `F.relu(..., inplace=True)` line. The
maintainer's fix: drop the `inplace` flag. The snippet is kept in a small module with a conv head
and an input-saliency helper, on random data.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(6, 4, 3, padding=1)

    def forward(self, x):
        x = F.relu(x, inplace=True)  # expect: GG108
        x = F.dropout(x, p=0.1, inplace=True)
        return self.conv(x)


def input_saliency(net, x):
    result = torch.sum(net(x))
    result.backward()
    return x.grad.abs().sum(1)


np.random.seed(0)
torch.manual_seed(0)
net = Net()
x = Variable(torch.from_numpy(np.random.randn(4, 6, 10, 10)).float(), requires_grad=True)
saliency = input_saliency(net, x)
print(saliency.shape)
