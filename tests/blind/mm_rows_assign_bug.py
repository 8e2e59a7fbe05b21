# Source: https://www.yongfengli.tk/2018/04/13/inplace-operation-in-pytorch.html ("Some Bugs when
# use pytorch": the forward below, and the error it gave)
"""A forward that multiplies by a learned matrix, bumps each row of the product with b[i] = b[i] + 1
and multiplies again inside the loop: each torch.mm(self.param, b) saves b, and the next row's
assignment overwrites it in place."""
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
            b[i] = b[i] + 1  # inplace operation
            y = y + torch.mm(self.param, b)
        return y


model = Model()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
a = torch.randn(10, 1)
loss = model(a).pow(2).mean()
optimizer.zero_grad()
loss.backward()  # expect: GG103
optimizer.step()
