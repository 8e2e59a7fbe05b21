"""Multi-task regression and classification on a shared trunk; each head's loss is backwarded as
soon as it is computed."""
import torch
import torch.nn as nn


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU())
        self.cls = nn.Linear(16, 4)
        self.reg = nn.Linear(16, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls(h), self.reg(h)


model = MultiTask()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(2):
    x, y_cls, y_reg = torch.randn(10, 8), torch.randint(0, 4, (10,)), torch.randn(10, 1)
    logits, value = model(x)
    opt.zero_grad()
    loss_cls = nn.functional.cross_entropy(logits, y_cls)
    loss_cls.backward()
    loss_reg = nn.functional.smooth_l1_loss(value, y_reg)
    loss_reg.backward()  # expect: GG101
    opt.step()
