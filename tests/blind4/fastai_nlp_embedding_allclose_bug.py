# Source: https://github.com/fastai/course-nlp/issues/47
"""fast.ai NLP course, notebook 5-nn-imdb: after fine-tuning the IMDb language model the notebook
takes the encoder's embedding, `enc = learn.model[0].encoder`, and checks that two words missing
from the vocabulary share the unknown token's row with `np.allclose(enc.weight[vocab.stoi[
"30-something"], :], enc.weight[vocab.stoi["linklater"], :])`. The rows are views of an nn.Parameter
that requires grad, and np.allclose converts them through `.numpy()`, which torch refuses: "Can't
call numpy() on Variable that requires grad". The AWD-LSTM language model becomes embedding, LSTM
and a tied decoder, fine-tuned for a few steps on random token streams; the vocabulary maps unknown
words to xxunk like fastai's Vocab.stoi defaultdict."""
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Vocab:
    def __init__(self, itos):
        self.itos = itos
        self.stoi = defaultdict(int, {w: i for i, w in enumerate(itos)})


class RNNEncoder(nn.Module):
    def __init__(self, vocab_sz, emb_sz, n_hid):
        super().__init__()
        self.encoder = nn.Embedding(vocab_sz, emb_sz, padding_idx=1)
        self.rnn = nn.LSTM(emb_sz, n_hid, batch_first=True)
        self.proj = nn.Linear(n_hid, emb_sz)

    def forward(self, x):
        out, _ = self.rnn(self.encoder(x))
        return self.proj(out)


class LinearDecoder(nn.Module):
    def __init__(self, tie_encoder):
        super().__init__()
        self.decoder = nn.Linear(tie_encoder.weight.size(1), tie_encoder.weight.size(0))
        self.decoder.weight = tie_encoder.weight

    def forward(self, x):
        return self.decoder(x)


itos = ['xxunk', 'xxpad', 'xxbos', 'the', 'movie', 'was', 'great', 'bad', 'film', 'a', 'plot', 'actor']
vocab = Vocab(itos)
encoder = RNNEncoder(len(itos), 6, 8)
model = nn.Sequential(encoder, LinearDecoder(encoder.encoder))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)

for it in range(4):
    stream = torch.randint(0, len(itos), (4, 9))
    x, y = stream[:, :-1], stream[:, 1:]
    loss = F.cross_entropy(model(x).reshape(-1, len(itos)), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(it, loss.item())

enc = model[0].encoder
print(vocab.stoi["30-something"], vocab.stoi["linklater"])
print(np.allclose(enc.weight[vocab.stoi["30-something"], :],  # expect: GG107
                  enc.weight[vocab.stoi["linklater"], :]))
