# Source: https://taourl.com/read-2213901.html
"""The Q&A digest on the in-place error names `tensor.add_` and `tensor[:] = x` as the in-place
operations that break autograd. Here a multi-label tagger post-processes its sigmoid
probabilities in a helper that forces the "background" column with a slice assignment,
`probs[:, 0] = 1 - probs[:, 1:].max(dim=1).values`; sigmoid saved its output for the backward, so
`loss.backward()` raises. (The digest's own snippet, `y = x * 2; y.add_(1)`, runs clean in torch
2.13.) Fix from the digest: build the result out of place (here with `torch.cat`).
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
    probs[:, 0] = 1 - probs[:, 1:].max(dim=1).values
    return probs


model = Tagger(10, 5)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
bce = nn.BCELoss()
x = torch.randn(16, 10)
tags = (torch.rand(16, 5) > 0.7).float()
for epoch in range(2):
    opt.zero_grad()
    probs = with_background(model(x))
    loss = bce(probs.clamp(1e-6, 1 - 1e-6), tags)
    loss.backward()  # expect: GG103
    opt.step()
    print(epoch, loss.item())
