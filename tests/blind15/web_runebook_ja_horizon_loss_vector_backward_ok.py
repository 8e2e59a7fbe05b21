# Source: https://runebook.dev/ja/docs/pytorch/generated/torch.autograd.function.backwardcfunction
"""The GRU forecaster with the page's fix (method 1: reduce the loss to a scalar with
`torch.mean()`): the trainer backwards the mean of the per-horizon losses and logs the vector
detached.
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
            loss = per_h.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, [round(v, 4) for v in per_h.detach().tolist()])


torch.manual_seed(0)
batches = [(torch.randn(8, 12, 3), torch.randn(8, 4)) for _ in range(3)]
fit(Forecaster(), batches)
