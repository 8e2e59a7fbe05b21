# Source: https://e-com-net.com/article/1275190471022362624.htm
"""The encoder with the CReLU built on the default `nn.ReLU(inplace=False)` (the fix the notes' explanation of
`inplace` implies): both halves are new tensors and the tanh output stays as saved.
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
        self.act = CReLU()
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
    loss.backward()
    opt.step()
    print(epoch, loss.item())
