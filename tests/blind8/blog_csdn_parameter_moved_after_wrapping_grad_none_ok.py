# Source: https://blog.csdn.net/weixin_43751558/article/details/124036310
"""The post's fix: move the tensor first and wrap it in `nn.Parameter` last
(`factor = torch.ones(num, requires_grad=True).cuda()`, `self.factor = torch.nn.Parameter(factor)`),
so the module holds a registered leaf parameter whose .grad backward fills. The CPU stand-in for
the move is the same cast as in the bug."""
import torch
import torch.nn as nn


class ChannelReweight(nn.Module):
    def __init__(self, num):
        super().__init__()
        factor = torch.ones(num, dtype=torch.float64, requires_grad=True).float()   # the post: .cuda()
        self.factor = torch.nn.Parameter(factor)
        self.fc = nn.Linear(num, 1)

    def forward(self, x):
        return self.fc(x * self.factor)


model = ChannelReweight(num=6)
x, y = torch.randn(16, 6), torch.randn(16, 1)
loss = nn.functional.mse_loss(model(x), y)
loss.backward()
print(model.fc.weight.grad.shape)
print(model.factor.grad)
