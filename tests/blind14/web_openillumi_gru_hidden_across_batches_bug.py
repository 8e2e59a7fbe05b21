# Source: https://openillumi.com/?p=10177
"""The Japanese article on "Trying to backward through the graph a second time" in RNN/GRU training:
the hidden state returned by one batch is fed into the next batch's forward while still attached to
the previous batch's graph, which that batch's backward freed. Here a GRU language model keeps its
hidden state in the trainer across batches; the second batch's backward walks back into the first
batch's freed GRU graph and torch raises. Fix from the article: detach the hidden state (a tuple
element by element) at the start of each batch (truncated BPTT).
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


class Trainer:
    def __init__(self, model, lr=1e-2):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.crit = nn.CrossEntropyLoss()
        self.hidden = None

    def train_batch(self, x, y):
        self.opt.zero_grad()
        logits, self.hidden = self.model(x, self.hidden)
        loss = self.crit(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        loss.backward()  # expect: GG101
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
