# Source: https://github.com/pytorch/pytorch/issues/1760
"""Fixed twin (`self.y.retain_grad()` in forward, so backward fills the intermediate's `.grad`). A user's `Net.forward` concatenates the list of input Variables, keeps the result on the module as
`self.y = x` and feeds it to `fc0`; after `output[0][0].backward()` the script prints `model.y.grad`, which
is None: `self.y` is the output of `torch.cat`, a non-leaf, so backward does not populate its `.grad` (torch
now warns "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"). Wrapping a copy in
a new `Variable(..., requires_grad=...)` "worked" only because that copy is a leaf cut off from the inputs.
Fix (what the maintainers pointed to): keep the graph and ask for the intermediate gradient with
`self.y.retain_grad()` in forward. `Variable` is gone: tensors with `requires_grad=True`; `xrange` -> `range`.
"""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc0 = nn.Linear(3, 5)

    def forward(self, x):
        x = torch.cat(x)
        self.y = x
        self.y.retain_grad()
        x = self.fc0(self.y)
        return x


model = Net()
x = [torch.tensor([[1., 2, 3], [4, 5, 6], [7, 8, 9]], requires_grad=True) for i in range(3)]
output = model(x)
output[0][0].backward()
print(model.y.grad)
print(x[0].grad)
