"""Word-level LSTM language model whose repackage helper returns list(hidden) (a new list, the
same tensors) instead of detaching them."""
import torch
import torch.nn as nn


def repackage_hidden(hidden):
    return list(hidden)


class LM(nn.Module):
    def __init__(self, ntoken=15, nhid=8):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, nhid)
        self.rnn = nn.LSTM(nhid, nhid, 2)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.encoder(x), tuple(hidden))
        return self.decoder(out), hidden


model = LM()
corpus = torch.randint(0, 15, (16, 3))
hidden = [torch.zeros(2, 3, 8), torch.zeros(2, 3, 8)]
for i in range(0, 12, 4):
    data, targets = corpus[i:i + 4], corpus[i + 1:i + 5]
    hidden = repackage_hidden(hidden)
    model.zero_grad()
    output, hidden = model(data, hidden)
    loss = nn.functional.cross_entropy(output.view(-1, 15), targets.reshape(-1))
    loss.backward()  # expect: GG101
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-0.5)
