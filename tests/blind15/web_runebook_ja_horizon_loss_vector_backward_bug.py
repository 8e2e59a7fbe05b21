# Source: https://runebook.dev/ja/docs/pytorch/generated/torch.autograd.function.backwardcfunction
"""The runebook.dev (ja) page on BackwardCFunction describes the trouble where the loss function
returns several values (not a scalar) and `loss.backward()` is called anyway, which raises "grad can
be implicitly created only for scalar outputs"; its first fix is to reduce with `torch.sum()` /
`torch.mean()`. Here a GRU forecaster's loss helper averages over the batch only, keeping one loss
per forecast horizon for the log, and the trainer backwards that 4-element vector. Fix (the page's
method 1): backward the mean over the horizons; the per-horizon values are kept for logging.
"""
import torch
import torch.nn as nn


class Forecaster(nn.Module):
    def __init__(self, n_feat=3, hidden=16, horizon=4):
        super().__init__()
        self.gru = nn.GRU(n_feat, hidden, batch_first=True)
        self.head = nn.Linear(hidden, horizon)

    def forward(self, seq):
        out, h = self.gru(seq)
        return self.head(out[:, -1])


def horizon_losses(pred, target):
    return ((pred - target) ** 2).mean(dim=0)


def fit(model, batches, epochs=2):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for seq, target in batches:
            per_h = horizon_losses(model(seq), target)
            opt.zero_grad()
            per_h.backward()  # expect: GG105
            opt.step()
        print(epoch, [round(v, 4) for v in per_h.tolist()])


torch.manual_seed(0)
batches = [(torch.randn(8, 12, 3), torch.randn(8, 4)) for _ in range(3)]
fit(Forecaster(), batches)
