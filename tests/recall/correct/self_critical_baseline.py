"""Self-critical sequence training: the greedy baseline is decoded under no_grad, the sampled
sequence's log-probs carry the graph, one backward per batch."""
import torch
import torch.nn as nn

vocab, hidden = 6, 8
emb, cell, out = nn.Embedding(vocab, hidden), nn.GRUCell(hidden, hidden), nn.Linear(hidden, vocab)
opt = torch.optim.Adam([*emb.parameters(), *cell.parameters(), *out.parameters()], lr=1e-3)


def decode(h, steps, greedy):
    tok, logps, seq = torch.zeros(h.size(0), dtype=torch.long), [], []
    for _ in range(steps):
        h = cell(emb(tok), h)
        dist = torch.distributions.Categorical(logits=out(h))
        tok = out(h).argmax(-1) if greedy else dist.sample()
        logps.append(dist.log_prob(tok))
        seq.append(tok)
    return torch.stack(seq, 1), torch.stack(logps, 1)


def reward(seq):
    return (seq == 3).float().mean(1)


for batch in range(2):
    h0 = torch.randn(4, hidden)
    with torch.no_grad():
        greedy, _ = decode(h0, 3, greedy=True)
    sampled, logps = decode(h0, 3, greedy=False)
    loss = -((reward(sampled) - reward(greedy)).unsqueeze(1) * logps).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
