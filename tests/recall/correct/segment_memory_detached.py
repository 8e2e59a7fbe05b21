"""Segment recurrence whose memory of the previous segment is stored detached."""
import torch
import torch.nn as nn

emb = nn.Embedding(20, 8)
attn = nn.MultiheadAttention(8, 2, batch_first=True)
out = nn.Linear(8, 20)
opt = torch.optim.Adam([*emb.parameters(), *attn.parameters(), *out.parameters()], lr=1e-3)
tokens = torch.randint(0, 20, (1, 13))
mem = None
for s in range(0, 12, 4):
    x = emb(tokens[:, s:s + 4])
    context = x if mem is None else torch.cat([mem, x], dim=1)
    h, _ = attn(x, context, context)
    loss = nn.functional.cross_entropy(out(h).view(-1, 20), tokens[:, s + 1:s + 5].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    mem = h.detach()
