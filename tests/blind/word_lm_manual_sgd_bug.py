# Source: https://github.com/pytorch/examples/pull/779
"""pytorch/examples word_language_model's train(): after clipping, the parameters are updated by
hand with p.add_(-lr, p.grad) (written here in the current signature, p.add_(p.grad, alpha=-lr)),
an in-place update of leaf parameters with grad enabled (the pull request: use p.data.add_)."""
import torch
import torch.nn as nn

ntokens, emsize, nhid, bptt, lr, clip = 20, 8, 8, 5, 20.0, 0.25


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(ntokens, emsize)
        self.rnn = nn.LSTM(emsize, nhid)
        self.decoder = nn.Linear(nhid, ntokens)

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return self.decoder(output).view(-1, ntokens), hidden

    def init_hidden(self, bsz):
        return (torch.zeros(1, bsz, nhid), torch.zeros(1, bsz, nhid))


def repackage_hidden(h):
    return tuple(v.detach() for v in h) if isinstance(h, tuple) else h.detach()


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


model = RNNModel()
criterion = nn.NLLLoss()
train_data = torch.randint(0, ntokens, (16, 2))


def train():
    model.train()
    hidden = model.init_hidden(2)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(torch.log_softmax(output, dim=-1), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.add_(p.grad, alpha=-lr)  # expect: GG108


train()
