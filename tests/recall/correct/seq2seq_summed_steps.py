"""Seq2seq with teacher forcing that sums the decoder steps' losses and backwards once."""
import torch
import torch.nn as nn

enc = nn.GRU(4, 8, batch_first=True)
dec_cell = nn.GRUCell(4 + 8, 8)
out = nn.Linear(8, 4)
opt = torch.optim.Adam([*enc.parameters(), *dec_cell.parameters(), *out.parameters()], lr=1e-3)
for step in range(2):
    src, tgt = torch.randn(2, 5, 4), torch.randn(2, 3, 4)
    enc_out, h = enc(src)
    h = h.squeeze(0)
    loss = 0.0
    for t in range(tgt.size(1)):
        prev = tgt[:, t - 1] if t > 0 else torch.zeros(2, 4)
        h = dec_cell(torch.cat([prev, enc_out.mean(1)], dim=1), h)
        loss = loss + (out(h) - tgt[:, t]).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
