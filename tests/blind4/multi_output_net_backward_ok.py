# Source: https://github.com/pytorch/pytorch/issues/19401
"""The reporter's gradient of a five-output network with the gradient argument the thread points
to: `out.backward(torch.ones_like(out))` passes d(sum of outputs)/d out explicitly, so backward
knows how to weight the five outputs. A small two-layer net and a loop that records each input's
parameter-gradient norm (a sensitivity check) stand in for the reporter's network and input."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, n_in=10, n_hidden=16, n_out=5):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.fc2 = nn.Linear(n_hidden, n_out)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def parameter_sensitivity(net, inputs):
    norms = []
    for input in inputs:
        net.zero_grad()
        out = net(input)  # some network and some input
        out.backward(torch.ones_like(out))
        norms.append(sum(p.grad.norm() ** 2 for p in net.parameters()).sqrt().item())
    return norms


net = Net()
inputs = [torch.randn(1, 10) for _ in range(3)]
print(parameter_sensitivity(net, inputs))
