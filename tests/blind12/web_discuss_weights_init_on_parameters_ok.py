# Source: https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308
"""Forum thread "Leaf variable was used in an inplace operation", with the thread's fix: the
DCGAN-style `weights_init(m)` applied with `model.apply` writes the initial values through
`m.weight.data` / `m.bias.data`, which autograd does not track, instead of filling the Parameters
(leaves that require grad) in place.
"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, nz, hidden, out_dim):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(nz, hidden),
            nn.BatchNorm1d(hidden),
            nn.ReLU(True),
            nn.Linear(hidden, out_dim),
            nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Linear") != -1:
        m.weight.data.normal_(0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        m.weight.data.normal_(1.0, 0.02)
        m.bias.data.fill_(0)


netG = Generator(8, 16, 12)
netG.apply(weights_init)
opt = torch.optim.Adam(netG.parameters(), lr=2e-4)
z = torch.randn(4, 8)
loss = netG(z).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
print(loss.item())
