# Source: https://runebook.dev/ru/docs/pytorch/generated/torch.autograd.function.inplacefunction/torch.autograd.function.InplaceFunction.save_for_backward
"""The page's rule: a tensor given to save_for_backward must stay unchanged until backward. The
normalisation is computed out of place (a new tensor for the statistic), so Square's saved input
keeps its version."""
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
        (x,) = ctx.saved_tensors
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


def normalise(h):
    return h / (h.abs().max().detach() + 1e-6)


model = SquareNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(3):
    x, y = torch.randn(5, 4), torch.randn(5, 1)
    optimizer.zero_grad()
    out, h = model(x)
    loss = ((out - y) ** 2).mean()
    h_norm = normalise(h)
    loss.backward()
    optimizer.step()
    print(step, loss.item(), h_norm.abs().max().item())
