# Source: https://www.bytezonex.com/archives/zxhoqINI.html
"""The Chinese guide to "modified by an inplace operation" names `Tensor.add_()`, `Tensor.mul_()` and
`Tensor.clamp_()` as the in-place calls that break autograd. Here a classifier trained with a
hand-written NLL loss guards the log with a helper that clamps the softmax probabilities in place,
`probs.clamp_(eps, 1.0)`; softmax saved its output for the backward, so `loss.backward()` raises.
Fix from the guide: do not modify the tensor in place (here `probs.clamp(eps, 1.0)`, out of place).
"""
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, n_in, n_cls):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, n_cls))

    def forward(self, x):
        return torch.softmax(self.body(x), dim=1)


def safe_log(probs, eps=1e-6):
    return probs.clamp_(eps, 1.0).log()


def nll(probs, target):
    return -safe_log(probs).gather(1, target.unsqueeze(1)).mean()


model = Classifier(12, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 12)
y = torch.randint(0, 4, (32,))
for epoch in range(3):
    opt.zero_grad()
    loss = nll(model(x), y)
    loss.backward()  # expect: GG103
    opt.step()
    print(epoch, loss.item())
