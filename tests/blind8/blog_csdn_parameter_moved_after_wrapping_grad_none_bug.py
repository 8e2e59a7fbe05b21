# Source: https://blog.csdn.net/weixin_43751558/article/details/124036310
"""The CSDN post on a learnable factor whose grad is None after backward: the module builds it as
`factor = torch.ones(num, requires_grad=True)` and `self.factor = torch.nn.Parameter(factor).cuda()`.
"After one .cuda() operation self.factor is no longer a leaf node": the device copy is recorded by
autograd, so reading `self.factor.grad` after `loss.backward()` gives None (with torch's non-leaf
warning). On this CPU-only machine the copy is a dtype cast, which autograd records the same way:
the factor is made in float64 and cast to the model's float32."""
import torch
import torch.nn as nn


class ChannelReweight(nn.Module):
    def __init__(self, num):
        super().__init__()
        factor = torch.ones(num, dtype=torch.float64, requires_grad=True)
        self.factor = torch.nn.Parameter(factor).float()   # the post: Parameter(factor).cuda()
        self.fc = nn.Linear(num, 1)

    def forward(self, x):
        return self.fc(x * self.factor)


model = ChannelReweight(num=6)
x, y = torch.randn(16, 6), torch.randn(16, 1)
loss = nn.functional.mse_loss(model(x), y)
loss.backward()
print(model.fc.weight.grad.shape)
print(model.factor.grad)  # expect: GG106
