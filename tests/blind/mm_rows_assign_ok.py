# Source: https://www.yongfengli.tk/2018/04/13/inplace-operation-in-pytorch.html ("Some Bugs when
# use pytorch": the out-of-place rewrite the post gives)
"""The same forward with the row bump written out of place, as the post recommends: a one-hot
column bione is built (its in-place fill touches no tensor the backward needs) and b = b + bione
makes a new tensor, so the b each torch.mm saved stays as it was."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.param = nn.Parameter(torch.randn(10, 10) * 0.1)

    def forward(self, a):
        y = 0
        b = torch.mm(self.param, a)
        for i in range(10):
            bione = torch.zeros(10, 1)
            bione[i] = 1
            b = b + bione  # out-of-place operation
            y = y + torch.mm(self.param, b)
        return y


model = Model()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
a = torch.randn(10, 1)
loss = model(a).pow(2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
