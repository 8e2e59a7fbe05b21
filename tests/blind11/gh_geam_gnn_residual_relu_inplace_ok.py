# Source: https://github.com/SeulLee05/GEAM/issues/4
"""Issue #4 (and #1 it refers to) of GEAM. GEAM's graph encoder with the threads' fix: the residual is added out of place (`h = h + h_in`),
so the ReLU output saved for backward is left unchanged. The graph library's message passing is
replaced by a dense adjacency matmul written in the file.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GraphConv(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, h, adj):
        return adj @ self.lin(h)


class GNN(nn.Module):
    def __init__(self, in_dim, dim, n_layers):
        super().__init__()
        self.embed = nn.Linear(in_dim, dim)
        self.layers = nn.ModuleList([GraphConv(dim) for _ in range(n_layers)])
        self.readout = nn.Linear(dim, 1)

    def forward(self, x, adj):
        h = self.embed(x)
        for layer in self.layers:
            h_in = h
            h = F.relu(layer(h, adj))
            h = h + h_in
        return self.readout(h.mean(0))


def make_graph(n, in_dim):
    x = torch.randn(n, in_dim)
    adj = (torch.rand(n, n) > 0.5).float()
    adj = adj / adj.sum(1, keepdim=True).clamp(min=1)
    return x, adj


model = GNN(8, 16, 3)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x, adj = make_graph(10, 8)
    target = torch.randn(1)
    loss = F.mse_loss(model(x, adj), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
