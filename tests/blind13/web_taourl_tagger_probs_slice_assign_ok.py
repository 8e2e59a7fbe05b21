# Source: https://taourl.com/read-2213901.html
"""The tagger with the digest's fix: the background column is computed and joined to the other
probabilities with `torch.cat`, out of place, so the sigmoid output saved for the backward is
not overwritten.
"""
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, n_in, n_tags):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, n_tags))

    def forward(self, x):
        return torch.sigmoid(self.body(x))


def with_background(probs):
    background = 1 - probs[:, 1:].max(dim=1, keepdim=True).values
    return torch.cat([background, probs[:, 1:]], dim=1)


model = Tagger(10, 5)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
bce = nn.BCELoss()
x = torch.randn(16, 10)
tags = (torch.rand(16, 5) > 0.7).float()
for epoch in range(2):
    opt.zero_grad()
    probs = with_background(model(x))
    loss = bce(probs.clamp(1e-6, 1 - 1e-6), tags)
    loss.backward()
    opt.step()
    print(epoch, loss.item())
