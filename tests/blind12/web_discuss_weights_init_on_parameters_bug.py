# Source: https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308
"""Forum thread "Leaf variable was used in an inplace operation": the user fills a model's
parameters in place. Here a DCGAN-style `weights_init(m)`, applied with `model.apply`, picks the
layers by class name and calls `m.weight.normal_(...)` / `m.bias.fill_(0)` on the Parameters
themselves: they are leaves that require grad, so torch raises "a leaf Variable that requires grad
is being used in an in-place operation". Fix from the thread: to initialise or update parameters,
write through `.data` (or under `torch.no_grad()`).
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
        m.weight.normal_(0.0, 0.02)  # expect: GG108
    elif classname.find("BatchNorm") != -1:
        m.weight.normal_(1.0, 0.02)
        m.bias.fill_(0)


netG = Generator(8, 16, 12)
netG.apply(weights_init)
opt = torch.optim.Adam(netG.parameters(), lr=2e-4)
z = torch.randn(4, 8)
loss = netG(z).pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
print(loss.item())
