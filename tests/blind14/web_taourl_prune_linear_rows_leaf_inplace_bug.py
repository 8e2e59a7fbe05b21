# Source: https://taourl.com/read-1955298.html
"""The Q&A digest on pruning `nn.Linear` weights in place: `model.weight[0, :] = 0` on a parameter
is refused by autograd unless it runs under `torch.no_grad()` (or goes through a clone assigned to
`.data`). Here a magnitude-pruning helper zeroes the output rows of smallest norm in every Linear
layer of an MLP between training epochs, without `torch.no_grad()`: writing into a view of the
leaf weight raises "a view of a leaf Variable that requires grad is being used in an in-place
operation". Fix from the digest: prune under `torch.no_grad()`.
"""
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))

    def forward(self, x):
        return self.layers(x)


def prune_rows(model, amount):
    for module in model.modules():
        if isinstance(module, nn.Linear):
            norms = module.weight.norm(dim=1)
            k = int(amount * norms.numel())
            for row in norms.argsort()[:k].tolist():
                module.weight[row, :] = 0  # expect: GG108


def train_epoch(model, opt, x, y):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


model = MLP()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(32, 10), torch.randint(0, 3, (32,))
for epoch in range(3):
    print(epoch, train_epoch(model, opt, x, y))
    prune_rows(model, 0.25)
