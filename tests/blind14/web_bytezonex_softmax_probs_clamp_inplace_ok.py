# Source: https://www.bytezonex.com/archives/zxhoqINI.html
"""The classifier with the guide's fix: the helper clamps the softmax probabilities out of place
(`probs.clamp(eps, 1.0)`), leaving the output softmax saved for its backward untouched.
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
    return probs.clamp(eps, 1.0).log()


def nll(probs, target):
    return -safe_log(probs).gather(1, target.unsqueeze(1)).mean()


model = Classifier(12, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 12)
y = torch.randint(0, 4, (32,))
for epoch in range(3):
    opt.zero_grad()
    loss = nll(model(x), y)
    loss.backward()
    opt.step()
    print(epoch, loss.item())
