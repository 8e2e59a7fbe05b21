# Source: https://e-com-net.com/article/1275190471022362624.htm
"""The Chinese notes on `nn.ReLU` vs `F.relu` explain `inplace=True` ("the computed value overwrites
the previous one") and quote nn.ReLU's docstring, whose example builds CReLU as
`torch.cat((m(input), m(-input)))`. Here an encoder applies such a CReLU, built with
`nn.ReLU(inplace=True)` to save memory, to tanh features: the first `m(input)` overwrites the
output that tanh saved for its backward, so `loss.backward()` raises. Fix: the module built with the
default `inplace=False`.
"""
import torch
import torch.nn as nn


class CReLU(nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.m = nn.ReLU(inplace=inplace)

    def forward(self, input):
        return torch.cat((self.m(input), self.m(-input)), dim=1)


class Encoder(nn.Module):
    def __init__(self, n_in, hidden, n_out):
        super().__init__()
        self.fc1 = nn.Linear(n_in, hidden)
        self.act = CReLU(inplace=True)
        self.fc2 = nn.Linear(2 * hidden, n_out)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        return self.fc2(self.act(h))


model = Encoder(10, 16, 4)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(20, 10), torch.randint(0, 4, (20,))
for epoch in range(2):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()  # expect: GG103
    opt.step()
    print(epoch, loss.item())
