# Source: https://alphahinex.github.io/2026/01/11/max-norm-of-pytorch-embedding
"""The tied-embedding character RNN language model with the fix torch's nn.Embedding documentation
gives when `max_norm` renormalizes the weight in place during forward: the output projection uses
`self.embed.weight.clone()`, so later lookups leave what the projection saved intact (the gradient
still reaches the tied weight through the clone).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TiedCharLM(nn.Module):
    def __init__(self, vocab=30, dim=16, max_norm=1.0):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, max_norm=max_norm)
        self.cell = nn.GRUCell(dim, dim)

    def project(self, h):
        return h @ self.embed.weight.clone().t()

    def forward(self, tokens):
        h = tokens.new_zeros(tokens.size(0), self.cell.hidden_size, dtype=torch.float)
        logits = []
        for t in range(tokens.size(1)):
            h = self.cell(self.embed(tokens[:, t]), h)
            logits.append(self.project(h))
        return torch.stack(logits, dim=1)


def lm_loss(model, batch):
    logits = model(batch[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), batch[:, 1:].reshape(-1))


torch.manual_seed(0)
model = TiedCharLM()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    batch = torch.randint(0, 30, (4, 8))
    loss = lm_loss(model, batch)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
