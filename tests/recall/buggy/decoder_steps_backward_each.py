"""A decoder that backwards every time step's loss while carrying the hidden state from the
encoder."""
import torch
import torch.nn as nn

enc = nn.GRU(3, 6, batch_first=True)
dec = nn.GRUCell(6, 6)
out = nn.Linear(6, 3)
opt = torch.optim.Adam([*enc.parameters(), *dec.parameters(), *out.parameters()], lr=1e-3)
src, tgt = torch.randn(2, 5, 3), torch.randn(2, 4, 3)
_, h = enc(src)
h = h[0]
for t in range(tgt.size(1)):
    h = dec(h, h)
    loss = (out(h) - tgt[:, t]).pow(2).mean()
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
