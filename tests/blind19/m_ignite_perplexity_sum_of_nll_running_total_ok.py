# Source: https://github.com/pytorch/ignite/commit/e1e1e5fb807beab3ebc9a88943a5b3dc41726863
"""pytorch-ignite `Perplexity` metric (before commit e1e1e5f) updated from a plain
training loop to report the training perplexity of a small GRU language model.

`Perplexity.update` computes `nll = F.cross_entropy(y_pred, y, reduction="sum")`
and accumulates `self._sum_of_nll += nll.to(self._device, dtype=torch.double)`.
The user passes the training logits, which require grad, so the accumulator
becomes part of the autograd graph and every update links the next batch's
graph onto it: a running total that keeps all iterations' graphs alive (memory
grows over the epoch) and that no backward ever walks.  torch raises nothing.

The commit accumulates `nll.detach()` instead; this file applies that fix
(the commit's own).  ignite's Metric base class is a
small stand-in with the same reset/update/compute protocol.
"""
from functools import wraps

import torch
import torch.nn as nn
import torch.nn.functional as F


class NotComputableError(RuntimeError):
    pass


def reinit__is_reduced(func):
    @wraps(func)
    def wrapper(self, *args, **kwargs):
        func(self, *args, **kwargs)
        self._is_reduced = False
    return wrapper


class Metric:
    def __init__(self, output_transform=lambda x: x, device=torch.device("cpu")):
        self._output_transform = output_transform
        self._device = torch.device(device)
        self._is_reduced = False
        self.reset()


class Perplexity(Metric):
    _state_dict_all_req_keys = ("_sum_of_nll", "_num_tokens")

    def __init__(self, output_transform=lambda x: x, device=torch.device("cpu")):
        super().__init__(output_transform=output_transform, device=device)

    @reinit__is_reduced
    def reset(self) -> None:
        self._sum_of_nll = torch.tensor(0.0, dtype=torch.double, device=self._device)
        self._num_tokens = torch.tensor(0, dtype=torch.long, device=self._device)

    @reinit__is_reduced
    def update(self, output) -> None:
        y_pred, y = output

        if y_pred.ndim < 2:
            raise ValueError(f"y_pred must be at least 2-dimensional (got shape: {y_pred.shape})")

        if y.ndim < 1:
            raise ValueError(f"y must be at least 1-dimensional (got shape: {y.shape})")

        nll = F.cross_entropy(y_pred, y, reduction="sum")
        self._sum_of_nll += nll.detach().to(self._device, dtype=torch.double)
        self._num_tokens += y.numel()

    def compute(self) -> float:
        if self._num_tokens == 0:
            raise NotComputableError("Perplexity must have at least one example before it can be computed.")

        return torch.exp(self._sum_of_nll / self._num_tokens).item()


class GRULanguageModel(nn.Module):
    def __init__(self, vocab_size=50, emb_dim=16, hidden=32):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.gru = nn.GRU(emb_dim, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab_size)

    def forward(self, tokens):
        out, _ = self.gru(self.embedding(tokens))
        return self.head(out)  # (B, T, V)


def make_batches(vocab_size, n_batches=4, batch_size=4, seq_len=12):
    batches = []
    for _ in range(n_batches):
        seq = torch.randint(0, vocab_size, (batch_size, seq_len + 1))
        batches.append((seq[:, :-1], seq[:, 1:]))
    return batches


def train_epoch(model, batches, optimizer, ppl):
    model.train()
    ppl.reset()
    for inputs, targets in batches:
        logits = model(inputs)
        y_pred = logits.transpose(1, 2)  # (B, V, T) as the metric expects
        loss = F.cross_entropy(y_pred, targets)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        ppl.update((y_pred, targets))
    return ppl.compute()


def main():
    torch.manual_seed(0)
    vocab_size = 50
    model = GRULanguageModel(vocab_size)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    ppl = Perplexity()
    batches = make_batches(vocab_size)
    for epoch in range(3):
        train_ppl = train_epoch(model, batches, optimizer, ppl)
        print(f"epoch {epoch}: train perplexity {train_ppl:.2f}")


if __name__ == "__main__":
    main()
