# Source: https://forums.fast.ai/t/rnn-hidden-state-initializations-chapter-12/91887
"""The fast.ai forum thread "RNN hidden state initializations (chapter 12)": the poster asks why
the book's multilayer language model LMModel5 keeps its hidden state on the module as
`self.h = h.detach()` after each batch, and whether it could be kept like the simpler models.
Without the detach (this program's forward stores `self.h = h`), the next batch's RNN starts from a
state that carries the previous batch's graph, and its backward walks that already freed graph:
"Trying to backward through the graph a second time". The model is the book's LMModel5 with a
small vocabulary; fastai's Learner is replaced by a plain training loop over random token batches
(the reset callback runs once per epoch, as in the book)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

vocab_sz, n_hidden, n_layers, bs, sl = 30, 16, 2, 4, 8


class LMModel5(nn.Module):
    def __init__(self, vocab_sz, n_hidden, n_layers):
        super().__init__()
        self.i_h = nn.Embedding(vocab_sz, n_hidden)
        self.rnn = nn.RNN(n_hidden, n_hidden, n_layers, batch_first=True)
        self.h_o = nn.Linear(n_hidden, vocab_sz)
        self.h = torch.zeros(n_layers, bs, n_hidden)

    def forward(self, x):
        res, h = self.rnn(self.i_h(x), self.h)
        self.h = h
        return self.h_o(res)

    def reset(self):
        self.h.zero_()


model = LMModel5(vocab_sz, n_hidden, n_layers)
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
stream = torch.randint(0, vocab_sz, (bs, 4 * sl + 1))
for epoch in range(2):
    model.reset()
    for i in range(0, 4 * sl, sl):
        xb, yb = stream[:, i:i + sl], stream[:, i + 1:i + sl + 1]
        loss = F.cross_entropy(model(xb).reshape(-1, vocab_sz), yb.reshape(-1))
        loss.backward()  # expect: GG101
        opt.step()
        opt.zero_grad()
