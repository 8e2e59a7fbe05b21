"""Attention layer with a learned relative-position bias that is built on the first call and cached
on the module "for speed"; later calls reuse the cached bias tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RelPosAttention(nn.Module):
    def __init__(self, dim=8, max_len=6):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.rel = nn.Embedding(2 * max_len - 1, 1)
        self.max_len = max_len
        self._bias = None

    def bias(self, n):
        if self._bias is None:
            idx = torch.arange(n)[:, None] - torch.arange(n)[None, :] + self.max_len - 1
            self._bias = self.rel(idx).squeeze(-1)
        return self._bias

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / q.size(-1) ** 0.5 + self.bias(x.size(1))
        return F.softmax(scores, dim=-1) @ v


layer = RelPosAttention()
opt = torch.optim.Adam(layer.parameters(), lr=1e-3)
for step in range(2):
    x = torch.randn(2, 6, 8)
    loss = layer(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
