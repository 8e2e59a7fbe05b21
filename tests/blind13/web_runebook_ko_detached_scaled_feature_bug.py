# Source: https://runebook.dev/ko/docs/pytorch/generated/torch.tensor.detach
"""The Korean guide's first "wrong use" of detach(): a learnable w times the input is cut off the
graph with `.detach()` before the rest of the computation, and `loss.backward()` is expected to leave
`w.grad` None or 0. Here a small regressor scales its input by a learnable gain, detaches the scaled
feature "to save memory" in a helper, and adds a fixed offset. torch 2.13 does not return None/0:
the loss has no grad_fn and backward raises "element 0 of tensors does not require grad". Fix from
the guide: do not detach a tensor that training needs.
"""
import torch
import torch.nn as nn


class ScaledRegressor(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.w = nn.Parameter(torch.ones(n_in))
        self.offset = 3.0

    def scaled(self, x):
        y = (self.w * x).detach()
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
    loss.backward()  # expect: GG104
    opt.step()
    print(step, loss.item(), model.w.grad)
