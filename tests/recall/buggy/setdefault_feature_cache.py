"""Per-sample feature cache with dict.setdefault: the encoder runs every time, but setdefault
returns the first stored value (with its old graph) for a sample seen before."""
import torch
import torch.nn as nn

encoder = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
head = nn.Linear(8, 1)
opt = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.05)
samples = {"a": torch.randn(1, 4), "b": torch.randn(1, 4)}
targets = {"a": torch.ones(1, 1), "b": -torch.ones(1, 1)}
cache = {}
for epoch in range(2):
    for key, x in samples.items():
        feats = cache.setdefault(key, encoder(x))
        loss = (head(feats) - targets[key]).pow(2).mean()
        opt.zero_grad()
        loss.backward()  # expect: GG101
        opt.step()
