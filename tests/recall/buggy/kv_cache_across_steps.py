"""Streaming attention with a key/value cache on the module: keys and values of past chunks are
concatenated onto self.k_cache / self.v_cache and the cache survives the optimizer steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CachedAttention(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.k_cache = None
        self.v_cache = None

    def forward(self, x):
        k, v = self.k(x), self.v(x)
        if self.k_cache is not None:
            k = torch.cat([self.k_cache, k], dim=1)
            v = torch.cat([self.v_cache, v], dim=1)
        self.k_cache, self.v_cache = k, v
        return F.scaled_dot_product_attention(self.q(x), k, v)


attn = CachedAttention()
head = nn.Linear(8, 1)
opt = torch.optim.SGD([*attn.parameters(), *head.parameters()], lr=0.01)
stream = torch.randn(1, 9, 8)
for i in range(0, 9, 3):
    y = head(attn(stream[:, i:i + 3])).mean()
    loss = (y - 1.0) ** 2
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
