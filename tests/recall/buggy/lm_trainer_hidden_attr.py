"""A character-level language-model trainer class keeps the recurrent hidden state on self between
calls to train_step and never detaches it."""
import torch
import torch.nn as nn


class CharLM(nn.Module):
    def __init__(self, vocab=10, emb=6, hidden=12):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.rnn = nn.RNN(emb, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens, hidden):
        output, hidden = self.rnn(self.emb(tokens), hidden)
        return self.out(output), hidden


class Trainer:
    def __init__(self, model, batch_size):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=2e-3)
        self.hidden = torch.zeros(1, batch_size, 12)

    def train_step(self, inputs, targets):
        logits, self.hidden = self.model(inputs, self.hidden)
        loss = nn.functional.cross_entropy(logits.reshape(-1, 10), targets.reshape(-1))
        self.opt.zero_grad()
        loss.backward()  # expect: GG101
        nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        return loss.item()


text = torch.randint(0, 10, (2, 25))
trainer = Trainer(CharLM(), batch_size=2)
for i in range(0, 20, 5):
    trainer.train_step(text[:, i:i + 5], text[:, i + 1:i + 6])
