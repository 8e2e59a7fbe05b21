# Source: https://github.com/lhycms/Deep_Learning_Notes
"""The notebook's "RuntimeError: a leaf Variable that requires grad is being used in an in-place
operation": `x = torch.tensor(..., requires_grad=True)` then `x += 1`. Here a learnable per-feature
input shift is created as a leaf requiring grad, and a `center_on` helper moves it onto the data mean
with `shift += ...` before training; torch raises on that line. Fix from the notes: if the update is
not meant to be differentiable, do it under `torch.no_grad()`.
"""
import torch


def make_shift(n_features):
    return torch.zeros(n_features, requires_grad=True)


def center_on(shift, data):
    shift += -data.mean(dim=0)  # expect: GG108
    return shift


data = torch.randn(32, 4) + 2.0
target = torch.randn(32)
shift = make_shift(4)
w = torch.randn(4, requires_grad=True)
center_on(shift, data)
opt = torch.optim.SGD([shift, w], lr=0.05)
for step in range(5):
    opt.zero_grad()
    pred = (data + shift) @ w
    loss = ((pred - target) ** 2).mean()
    loss.backward()
    opt.step()
    print(step, loss.item())
