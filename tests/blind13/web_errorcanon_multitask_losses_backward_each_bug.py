# Source: https://errorcanon.top/errors/pytorch/strided-gradient-issue/zh.md
"""The error-catalogue entry for "Trying to backward through the graph a second time": two losses of
one network backwarded one after the other (`loss1.backward(); loss2.backward()`) without
retain_graph. Here a multi-task model (shared encoder, a regression and a classification head)
returns a dict of losses and the training step backwards each entry in a loop; the second
backward walks the shared encoder's graph that the first one freed. Fix from the entry's second
solution: compute both losses together (sum them) and backward once.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh())
        self.reg_head = nn.Linear(16, 1)
        self.cls_head = nn.Linear(16, 3)

    def forward(self, x):
        h = self.encoder(x)
        return self.reg_head(h), self.cls_head(h)


def compute_losses(model, batch):
    x, y_reg, y_cls = batch
    pred_reg, logits = model(x)
    return {"reg": F.mse_loss(pred_reg, y_reg), "cls": F.cross_entropy(logits, y_cls)}


model = MultiTaskNet()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
batch = (torch.randn(24, 10), torch.randn(24, 1), torch.randint(0, 3, (24,)))
for epoch in range(3):
    opt.zero_grad()
    losses = compute_losses(model, batch)
    for name, loss in losses.items():
        loss.backward()  # expect: GG101
    opt.step()
    print(epoch, {k: v.item() for k, v in losses.items()})
