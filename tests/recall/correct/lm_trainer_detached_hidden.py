"""Language-model trainer class that detaches the hidden state it keeps on self every step."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, vocab=10, hidden=12, batch_size=2):
        self.emb = nn.Embedding(vocab, 6)
        self.rnn = nn.GRU(6, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)
        params = [*self.emb.parameters(), *self.rnn.parameters(), *self.out.parameters()]
        self.opt = torch.optim.Adam(params, lr=2e-3)
        self.hidden = torch.zeros(1, batch_size, hidden)
        self.vocab = vocab

    def train_step(self, inputs, targets):
        self.hidden = self.hidden.detach()
        output, self.hidden = self.rnn(self.emb(inputs), self.hidden)
        loss = nn.functional.cross_entropy(self.out(output).reshape(-1, self.vocab), targets.reshape(-1))
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


text = torch.randint(0, 10, (2, 25))
trainer = Trainer()
for i in range(0, 20, 5):
    trainer.train_step(text[:, i:i + 5], text[:, i + 1:i + 6])
