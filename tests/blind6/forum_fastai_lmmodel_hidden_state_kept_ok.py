# Source: https://forums.fast.ai/t/rnn-hidden-state-initializations-chapter-12/91887
"""The book's LMModel5, as the thread quotes it: the state is kept across batches but detached,
`self.h = h.detach()`, so each backward stops at the start of its own batch (truncated BPTT) and
the state's values still carry over."""
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
        self.h = h.detach()
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
        loss.backward()
        opt.step()
        opt.zero_grad()
