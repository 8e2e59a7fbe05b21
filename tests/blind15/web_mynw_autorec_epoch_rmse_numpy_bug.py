# Source: http://mynw.cn/network/6023.html
"""The mynw.cn note on `.detach().cpu().numpy()` illustrates it with an AutoRec training routine:
`train(epoch)` adds each batch's `loss` and `rmse` (returned by `rec.loss(...)`) into `cost_all` and
`RMSE`, then converts the epoch RMSE to NumPy, for which it must first be detached. Without the
`.detach()` (as here) `RMSE.cpu().numpy()` raises "Can't call numpy() on Tensor that requires grad",
since the per-batch `rmse` carries the decoder's graph (so do the running totals, which only grow).
Fix (the note's): `.detach()` before `.cpu().numpy()`; the `_ok` also accumulates `loss.item()` and
`rmse.detach()` so the totals do not keep every batch's graph.
"""
import numpy as np
import torch
import torch.nn as nn


class AutoRec(nn.Module):
    def __init__(self, num_items, hidden=16, lam=1e-3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(num_items, hidden), nn.Sigmoid())
        self.decoder = nn.Linear(hidden, num_items)
        self.lam = lam

    def forward(self, x):
        return self.decoder(self.encoder(x))

    def loss(self, decoder, input, optimizer, mask_input):
        cost = ((decoder - input) * mask_input).pow(2).sum()
        reg = sum(p.pow(2).sum() for name, p in self.named_parameters() if "weight" in name)
        rmse = ((decoder - input) * mask_input).pow(2).sum()
        return cost + self.lam * 0.5 * reg, rmse


num_users, num_items = 40, 30
ratings = torch.randint(1, 6, (num_users, num_items)).float()
mask = (torch.rand(num_users, num_items) < 0.3).float()
loader = [(ratings[i:i + 8] * mask[i:i + 8], mask[i:i + 8], None) for i in range(0, num_users, 8)]
rec = AutoRec(num_items)
optimer = torch.optim.Adam(rec.parameters(), lr=1e-3)


def train(epoch):
    RMSE = 0
    cost_all = 0
    for step, (batch_x, batch_mask_x, batch_y) in enumerate(loader):
        batch_x = batch_x.type(torch.FloatTensor)
        batch_mask_x = batch_mask_x.type(torch.FloatTensor)
        decoder = rec(batch_x)
        loss, rmse = rec.loss(decoder=decoder, input=batch_x, optimizer=optimer, mask_input=batch_mask_x)
        optimer.zero_grad()
        loss.backward()
        optimer.step()
        cost_all += loss  # expect: GG202
        RMSE += rmse  # expect: GG202
    RMSE = np.sqrt(RMSE.cpu().numpy() / mask.sum().item())  # expect: GG107
    print("epoch", epoch, "train cost", float(cost_all), "train RMSE", RMSE)


for epoch in range(2):
    train(epoch)
