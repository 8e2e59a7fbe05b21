# Source: https://github.com/pytorch/pytorch/issues/55980
"""A model that scales one pixel of a conv feature map by another conv's output (pytorch #55980,
PyTorch 1.8): `x[0, :, 0, 0] *= var` works, but the reporter's "equal" out-of-place form
`x[0, :, 0, 0] = x[0, :, 0, 0] * var` makes loss.backward() fail. The multiplication saves its
operand `x[0, :, 0, 0]`, a view of x, and the assignment then writes into x, so the saved view has
been modified ("one of the variables needed for gradient computation has been modified by an
inplace operation"; ezyang: this is expected, clone the slice). The reporter's program, with the
gradient hook on var."""
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(12, 12, 3)

    def forward(self, x, y):
        x = self.conv(x)
        y = self.conv(y)
        var = y.flatten()
        x[0, :, 0, 0] = x[0, :, 0, 0] * var

        loss = torch.mean(x)
        var.register_hook(lambda grad: print('var grad', grad.sum()))
        return loss


model = Model()

x = torch.ones([1, 12, 3, 3]).float()
y = torch.ones([1, 12, 3, 3]).float()
loss = model(x, y)

loss.backward()  # expect: GG103
