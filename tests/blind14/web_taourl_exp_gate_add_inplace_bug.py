# Source: https://taourl.com/read-2445510.html
"""The Q&A digest on "one of the variables needed for gradient computation has been modified by an
inplace operation" shows `y.add_(1)` breaking the graph and, among its fixes, gradient checkpointing
with a `custom_forward` that avoids the in-place add. Here a deep regressor stacks gated blocks
whose function adds an offset in place to the output of `exp`, which saved that output, so
`loss.backward()` raises. Fix from the digest: the blocks run through `checkpoint` with a
`custom_forward` that adds out of place (`y = y + 1`). (Checkpointing with the in-place add kept,
`use_reentrant=False`, does not raise in torch 2.13: the recomputation hides it.)
"""
import torch
import torch.nn as nn


class ExpBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def custom_forward(self, x):
        y = torch.exp(-self.lin(x).pow(2))
        y.add_(1)
        return x * y

    def forward(self, x):
        return self.custom_forward(x)


class Regressor(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.blocks = nn.ModuleList([ExpBlock(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


model = Regressor(8, 3)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(16, 8), torch.randn(16, 1)
for step in range(2):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()  # expect: GG103
    opt.step()
    print(step, loss.item())
