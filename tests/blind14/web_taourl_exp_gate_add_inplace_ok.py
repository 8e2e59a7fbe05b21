# Source: https://taourl.com/read-2445510.html
"""The checkpointed regressor with the digest's fix: `custom_forward` adds the offset out of place
(`y = y + 1`), so the output `exp` saved is left intact for the recomputed backward.
"""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class ExpBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def custom_forward(self, x):
        y = torch.exp(-self.lin(x).pow(2))
        y = y + 1
        return x * y

    def forward(self, x):
        return checkpoint(self.custom_forward, x, use_reentrant=False)


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
    loss.backward()
    opt.step()
    print(step, loss.item())
