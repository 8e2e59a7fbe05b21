# Source: https://taourl.com/read-2140379.html
"""The self-attention block with the digest's fix: the attention dropout is built without
`inplace=True`, so it returns a new tensor and the softmax weights saved for the backward stay
intact.
"""
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, dim, p_drop=0.1):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.attn_drop = nn.Dropout(p_drop)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        weights = scores.softmax(dim=-1)
        weights = self.attn_drop(weights)
        return self.proj(weights @ v)


class TinyEncoder(nn.Module):
    def __init__(self, dim, n_cls):
        super().__init__()
        self.attn = SelfAttention(dim)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_cls)

    def forward(self, x):
        h = self.norm(x + self.attn(x))
        return self.head(h.mean(dim=1))


model = TinyEncoder(16, 3)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(4, 7, 16)
y = torch.randint(0, 3, (4,))
model.train()
for step in range(2):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    print(step, loss.item())
