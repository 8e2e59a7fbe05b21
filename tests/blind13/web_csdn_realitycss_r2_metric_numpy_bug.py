# Source: https://blog.csdn.net/realitycss/article/details/116855385
"""The CSDN notes on tensors and autograd: "tensor.numpy(): a tensor with requires_grad=True cannot
be converted directly; use tensor.detach().numpy()". Here a regression training loop hands the
model's predictions, still carrying their graph, to a NumPy R^2 metric each epoch; the metric's
`pred.numpy()` raises "Can't call numpy() on Tensor that requires grad". Fix from the notes:
convert `pred.detach().numpy()`.
"""
import numpy as np
import torch
import torch.nn as nn


def r2_score(pred, target):
    p = pred.numpy()  # expect: GG107
    t = target.numpy()
    ss_res = ((t - p) ** 2).sum()
    ss_tot = ((t - t.mean()) ** 2).sum()
    return 1.0 - ss_res / ss_tot


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x).squeeze(1)


x = torch.randn(64, 3)
y = x @ torch.tensor([1.0, -2.0, 0.5]) + 0.1 * torch.randn(64)
model = MLP()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
history = []
for epoch in range(5):
    pred = model(x)
    loss = nn.functional.mse_loss(pred, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    history.append(r2_score(pred, y))
print(np.round(history, 3))
