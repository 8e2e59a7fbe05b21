# Source: https://github.com/pytorch/pytorch/issues/727
"""Fixed twin of q_pytorch_inplace_relu_dropout_on_input_bug.py. The network's first ops,
`F.relu(x, inplace=True)` and `F.dropout(x, p=0.1, inplace=True)`, wrote into the input Variable
that requires grad (a leaf): torch refuses with "a leaf Variable that requires grad is being used in
an in-place operation". Fix (the maintainer's answer in the thread): remove the `inplace` flags,
so the input keeps its values and receives its gradient. Small conv head and input-saliency
helper on random data.
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
        x = F.relu(x)
        x = F.dropout(x, p=0.1)
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
