# Source: https://github.com/quark0/darts/issues/56
"""DARTS' RNN architecture search with the thread's fix (chrischute's answer): repackage_hidden
detaches every tensor (`isinstance(h, torch.Tensor): return h.detach()`) instead of testing
`type(h) == Variable`, so each truncated-BPTT batch starts from a hidden state cut from the
previous batch's graph and loss.backward() never reaches a freed graph.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

PRIMITIVES = ["tanh", "relu", "sigmoid", "identity"]
STEPS = 3


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return [repackage_hidden(v) for v in h]


class DARTSCellSearch(nn.Module):
    def __init__(self, ninp, nhid):
        super().__init__()
        self.nhid = nhid
        self._W0 = nn.Parameter(torch.empty(ninp + nhid, 2 * nhid).uniform_(-0.04, 0.04))
        self._Ws = nn.ParameterList([nn.Parameter(torch.empty(nhid, 2 * nhid).uniform_(-0.04, 0.04))
                                     for _ in range(STEPS)])

    def _get_activation(self, name):
        return {"tanh": torch.tanh, "relu": torch.relu, "sigmoid": torch.sigmoid,
                "identity": lambda x: x}[name]

    def cell(self, x, h_prev, probs):
        c0, h0 = torch.split(torch.cat([x, h_prev], dim=-1).mm(self._W0), self.nhid, dim=-1)
        s0 = h_prev + torch.sigmoid(c0) * (torch.tanh(h0) - h_prev)
        states = [s0]
        for i in range(STEPS):
            s_prev = states[-1]
            c, h = torch.split(s_prev.mm(self._Ws[i]), self.nhid, dim=-1)
            c = torch.sigmoid(c)
            s = 0
            for k, name in enumerate(PRIMITIVES):
                fn = self._get_activation(name)
                s = s + probs[i][k] * (s_prev + c * (fn(h) - s_prev))
            states.append(s)
        return torch.mean(torch.stack(states[1:], -1), -1)

    def forward(self, inputs, hidden, probs):
        T = inputs.size(0)
        hiddens = []
        h = hidden
        for t in range(T):
            h = self.cell(inputs[t], h, probs)
            hiddens.append(h)
        return torch.stack(hiddens), hiddens[-1]


class RNNModelSearch(nn.Module):
    def __init__(self, ntoken, ninp, nhid):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnns = nn.ModuleList([DARTSCellSearch(ninp, nhid)])
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid
        self.weights = nn.Parameter(1e-3 * torch.randn(STEPS, len(PRIMITIVES)))

    def forward(self, input, hidden):
        emb = self.encoder(input)
        probs = F.softmax(self.weights, dim=-1)
        raw_output = emb
        new_hidden = []
        for l, rnn in enumerate(self.rnns):
            raw_output, new_h = rnn(raw_output, hidden[l], probs)
            new_hidden.append(new_h)
        logit = self.decoder(raw_output.view(-1, self.nhid))
        log_prob = F.log_softmax(logit, dim=-1)
        return log_prob, new_hidden

    def init_hidden(self, bsz):
        return [torch.zeros(bsz, self.nhid)]


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


def train(model, optimizer, train_data, batch_size, bptt):
    hidden = model.init_hidden(batch_size)
    for i in range(0, train_data.size(0) - 1, bptt):
        data, targets = get_batch(train_data, i, bptt)
        hidden = repackage_hidden(hidden)
        optimizer.zero_grad()
        log_prob, hidden = model(data, hidden)
        loss = F.nll_loss(log_prob, targets)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()


ntokens, batch_size, bptt = 20, 4, 5
train_data = torch.randint(0, ntokens, (16, batch_size))
model = RNNModelSearch(ntokens, 8, 8)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train(model, optimizer, train_data, batch_size, bptt)
