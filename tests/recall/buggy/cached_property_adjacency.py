"""Graph model whose learned, normalised adjacency is a functools.cached_property: computed on the
first forward from the edge-weight parameter and reused, with its graph, by later forwards."""
from functools import cached_property

import torch
import torch.nn as nn


class LearnedGraphConv(nn.Module):
    def __init__(self, n_nodes=5, dim=4):
        super().__init__()
        self.edge_logits = nn.Parameter(torch.zeros(n_nodes, n_nodes))
        self.lin = nn.Linear(dim, dim)

    @cached_property
    def adjacency(self):
        a = torch.sigmoid(self.edge_logits)
        return a / a.sum(1, keepdim=True)

    def forward(self, x):
        return torch.relu(self.adjacency @ self.lin(x))


model = LearnedGraphConv()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x, y = torch.randn(5, 4), torch.randn(5, 4)
for epoch in range(3):
    loss = (model(x) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
