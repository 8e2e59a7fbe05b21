# Source: https://runebook.dev/ko/docs/pytorch/generated/torch.tensor.detach
"""The guide's detach() example with its fix: the scaled feature `w * x` is not detached, so the
loss reaches the learnable gain and `w.grad` is the expected x-weighted gradient.
"""
import torch
import torch.nn as nn


class ScaledRegressor(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.w = nn.Parameter(torch.ones(n_in))
        self.offset = 3.0

    def scaled(self, x):
        y = self.w * x
        return y

    def forward(self, x):
        z = self.scaled(x) + self.offset
        return z.sum(dim=1)


model = ScaledRegressor(4)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(8, 4)
target = torch.randn(8)
for step in range(3):
    opt.zero_grad()
    loss = ((model(x) - target) ** 2).mean()
    loss.backward()
    opt.step()
    print(step, loss.item(), model.w.grad)
