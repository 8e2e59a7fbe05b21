# Source: https://openillumi.com/?p=10177
"""The GRU language-model trainer with the article's fix: the hidden state carried from the previous
batch is detached before the forward pass (truncated BPTT), so each batch's backward stays inside
its own graph.
"""
import torch
import torch.nn as nn


class CharGRU(nn.Module):
    def __init__(self, vocab, emb, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.gru = nn.GRU(emb, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens, hidden):
        out, hidden = self.gru(self.embed(tokens), hidden)
        return self.head(out), hidden


def detach_hidden(hidden):
    if hidden is None:
        return None
    if isinstance(hidden, tuple):
        return tuple(h.detach() for h in hidden)
    return hidden.detach()


class Trainer:
    def __init__(self, model, lr=1e-2):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.crit = nn.CrossEntropyLoss()
        self.hidden = None

    def train_batch(self, x, y):
        self.opt.zero_grad()
        self.hidden = detach_hidden(self.hidden)
        logits, self.hidden = self.model(x, self.hidden)
        loss = self.crit(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        loss.backward()
        self.opt.step()
        return loss.item()


def batches(stream, bptt):
    for i in range(0, stream.size(1) - 1 - bptt, bptt):
        yield stream[:, i:i + bptt], stream[:, i + 1:i + 1 + bptt]


vocab = 20
stream = torch.randint(0, vocab, (4, 61))
trainer = Trainer(CharGRU(vocab, 8, 16))
for step, (x, y) in enumerate(batches(stream, 10)):
    print(step, trainer.train_batch(x, y))
