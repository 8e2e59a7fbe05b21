# Source: https://discuss.pytorch.org/t/inplace-cat-buffer/75832
"""A forum thread: an AbstractDenseNet of Linear layers concatenates each layer's output to its
input (`torch.cat` per layer) and runs out of memory; the poster wants "one big preallocated buffer
filled in place during the forward pass", which autograd forbids. Here DenseNet.forward does that:
it allocates the buffer, copies the input in and writes each layer's output into the next slice,
feeding every layer a slice (a view) of the buffer. Each Linear saved its input view for backward,
and the later writes into the same buffer bump its version, so `loss.backward()` raises "one of the
variables needed for gradient computation has been modified by an inplace operation". Fix (the
answer: the input of each linear is needed for backward, so the buffer cannot be overwritten): keep
the concatenation.
"""
import torch
import torch.nn as nn


class AbstractDenseNet(nn.Module):
    def __init__(self, in_features, depth, width):
        super().__init__()
        self._depth = depth
        self._width = width
        self._in_features = in_features
        self._out_features = in_features + width * depth
        self.layers = nn.ModuleList(
            self.get_layer(in_features=in_features + i * width, out_features=width)
            for i in range(depth)
        )

    def get_layer(self, in_features, out_features):
        raise NotImplementedError

    def forward(self, tensor):
        buffer = tensor.new_zeros(tensor.size(0), self._out_features)
        buffer[:, : self._in_features] = tensor
        filled = self._in_features
        for i in range(self._depth):
            cur_out = self.layers[i](buffer[:, :filled])
            buffer[:, filled : filled + self._width] = cur_out
            filled += self._width
        return buffer


class DenseNet(AbstractDenseNet):
    def get_layer(self, in_features, out_features):
        return nn.Sequential(nn.Linear(in_features, out_features), nn.Tanh())


torch.manual_seed(0)
net = DenseNet(in_features=8, depth=3, width=4)
head = nn.Linear(net._out_features, 1)
opt = torch.optim.SGD(list(net.parameters()) + list(head.parameters()), lr=0.01)
x, y = torch.randn(16, 8), torch.randn(16, 1)
for step in range(2):
    loss = ((head(net(x)) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()  # expect: GG103
    opt.step()
    print(step, loss.item())
