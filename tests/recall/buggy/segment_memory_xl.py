"""Transformer-XL-style segment recurrence: each segment attends over a memory of the previous
segment's hidden states, and the new memory is stored without detach."""
import torch
import torch.nn as nn


class MemLayer(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, 2, batch_first=True)
        self.ff = nn.Linear(d, d)

    def forward(self, x, mem):
        context = x if mem is None else torch.cat([mem, x], dim=1)
        h, _ = self.attn(x, context, context)
        return self.ff(h) + x


emb = nn.Embedding(20, 8)
layer = MemLayer()
out = nn.Linear(8, 20)
opt = torch.optim.Adam([*emb.parameters(), *layer.parameters(), *out.parameters()], lr=1e-3)
tokens = torch.randint(0, 20, (1, 13))
mem = None
for s in range(0, 12, 4):
    x = emb(tokens[:, s:s + 4])
    h = layer(x, mem)
    loss = nn.functional.cross_entropy(out(h).view(-1, 20), tokens[:, s + 1:s + 5].reshape(-1))
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
    mem = h
