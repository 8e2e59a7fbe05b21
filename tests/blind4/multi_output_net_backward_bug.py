# Source: https://github.com/pytorch/pytorch/issues/19401
"""Gradients of a network's outputs with respect to its parameters, the way the reporter describes
it: `out = net(input); out.backward()`. That works while the network has one output, but this
network has five (`out` is 1 x 5), and backward without an argument fails ("grad can be implicitly
created only for scalar outputs"); the reporter asks why torch cannot infer the shape instead of
requiring `out.backward(torch.randn(1, 5))`, and is pointed to the forum thread on the gradient
argument. A small two-layer net and a loop that records each input's parameter-gradient norm (a
sensitivity check) stand in for the reporter's unnamed network and input."""
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
        out.backward()  # expect: GG105
        norms.append(sum(p.grad.norm() ** 2 for p in net.parameters()).sqrt().item())
    return norms


net = Net()
inputs = [torch.randn(1, 10) for _ in range(3)]
print(parameter_sensitivity(net, inputs))
