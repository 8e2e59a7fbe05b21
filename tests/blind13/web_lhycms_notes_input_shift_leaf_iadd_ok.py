# Source: https://github.com/lhycms/Deep_Learning_Notes
"""The notebook's leaf in-place example with its second fix: the learnable input shift (a leaf that
requires grad) is moved onto the data mean under `torch.no_grad()`, an update autograd does not
record, so the leaf stays a leaf and training runs.
"""
import torch


def make_shift(n_features):
    return torch.zeros(n_features, requires_grad=True)


def center_on(shift, data):
    with torch.no_grad():
        shift += -data.mean(dim=0)
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
