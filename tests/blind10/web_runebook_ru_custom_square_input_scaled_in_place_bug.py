# Source: https://runebook.dev/ru/docs/pytorch/generated/torch.autograd.function.inplacefunction/torch.autograd.function.InplaceFunction.save_for_backward
"""The Russian runebook page on save_for_backward: a custom autograd.Function (its example squares
a tensor) must keep its inputs with ctx.save_for_backward, and if the saved tensor is then changed
in place before backward runs, PyTorch's version tracking raises an error instead of returning
wrong gradients. A small regression net with a hand-written Square activation; the training step
rescales the hidden pre-activation in place (a running "feature normalisation") after it went
through Square, so Square's backward finds its saved input modified."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors  # expect: GG103
        return 2 * x * grad_out


class SquareNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        h = self.fc1(x)
        out = self.fc2(Square.apply(h))
        return out, h


def normalise_(h):
    h.div_(h.abs().max().detach() + 1e-6)


model = SquareNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(3):
    x, y = torch.randn(5, 4), torch.randn(5, 1)
    optimizer.zero_grad()
    out, h = model(x)
    loss = ((out - y) ** 2).mean()
    normalise_(h)
    loss.backward()
    optimizer.step()
    print(step, loss.item())
