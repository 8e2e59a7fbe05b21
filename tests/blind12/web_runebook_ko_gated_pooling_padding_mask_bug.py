# Source: https://runebook.dev/ko/docs/pytorch/generated/torch.autograd.function.inplacefunction/torch.autograd.function.InplaceFunction
"""The article (Korean) on in-place operations in autograd (`a += b`, `x.mul_(2)`, `y[0] = 1`): the
backward often needs the original value of an intermediate tensor, and writing into it in place
makes autograd raise because the tensor's version no longer matches. Here a gated pooling layer
over padded sequences computes sigmoid gates and zeroes the gates of the padding positions with an
index assignment (`gates[pad] = 0.0`) in a helper; sigmoid saved its output, so the loss's backward
raises "one of the variables needed for gradient computation has been modified by an inplace
operation". Fix from the article: work on a `.clone()` (or out of place) instead of the original.
"""
import torch
import torch.nn as nn


def padding_mask(lengths, max_len):
    return torch.arange(max_len)[None, :] >= lengths[:, None]


def mask_padding(gates, lengths):
    pad = padding_mask(lengths, gates.shape[1])
    gates[pad] = 0.0
    return gates


class GatedPooling(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gate = nn.Linear(dim, 1)

    def forward(self, h, lengths):
        gates = torch.sigmoid(self.gate(h)).squeeze(-1)
        gates = mask_padding(gates, lengths)
        return (gates.unsqueeze(-1) * h).sum(1) / gates.sum(1, keepdim=True).clamp(min=1e-6)


class Tagger(nn.Module):
    def __init__(self, vocab, dim, n_cls):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.pool = GatedPooling(dim)
        self.out = nn.Linear(dim, n_cls)

    def forward(self, ids, lengths):
        h, _ = self.rnn(self.embed(ids))
        return self.out(self.pool(h, lengths))


model = Tagger(30, 8, 3)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
ids = torch.randint(0, 30, (4, 6))
lengths = torch.tensor([6, 4, 3, 5])
labels = torch.randint(0, 3, (4,))
for step in range(2):
    loss = nn.functional.cross_entropy(model(ids, lengths), labels)
    opt.zero_grad()
    loss.backward()  # expect: GG103
    opt.step()
    print(step, loss.item())
