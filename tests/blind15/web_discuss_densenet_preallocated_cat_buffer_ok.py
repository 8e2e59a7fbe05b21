# Source: https://discuss.pytorch.org/t/inplace-cat-buffer/75832
"""The DenseNet with the thread's answer (each Linear needs its input for backward, so the buffer
cannot be overwritten): the forward concatenates each layer's output to its input with `torch.cat`,
as the poster's original code did.
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
        cat_dim = len(tensor.size()) - 1
        for i in range(self._depth):
            cur_out = self.layers[i](tensor)
            tensor = torch.cat([tensor, cur_out], dim=cat_dim)
        return tensor


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
    loss.backward()
    opt.step()
    print(step, loss.item())
