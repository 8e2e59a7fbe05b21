# Source: https://github.com/pyg-team/pytorch_geometric/issues/874
"""The reporter's graph autoencoder with the fix rusty1s gave (compute the mse from `out`; for an
autoencoder the target is the input itself): the reconstruction loss compares the model's output
with the input features, `loss = F.mse_loss(out, data.x)`, so it goes through both
GCNConv layers. A minimal GCNConv and a list of random graphs batched like torch_geometric's
DataLoader stand in for the library and the dataset."""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F


class GCNConv(nn.Module):
    """x' = D^-1/2 (A + I) D^-1/2 x W + b, as torch_geometric.nn.GCNConv computes it."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels))

    def forward(self, x, edge_index):
        num_nodes = x.size(0)
        loops = torch.arange(num_nodes).repeat(2, 1)
        row, col = torch.cat([edge_index, loops], dim=1)
        deg = torch.zeros(num_nodes).index_add_(0, col, torch.ones(col.numel()))
        norm = deg[row].rsqrt() * deg[col].rsqrt()
        h = self.lin(x)
        out = torch.zeros(num_nodes, h.size(1)).index_add(0, col, h[row] * norm.unsqueeze(1))
        return out + self.bias


class Net(torch.nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = GCNConv(3, 16)
        self.conv2 = GCNConv(16, 3)

    def forward(self, data):
        x, edge_index = data.x, data.edge_index
        x = self.conv1(x, edge_index)
        x = self.conv2(x, edge_index)
        return x


def random_graph(num_nodes=6, num_edges=10):
    edge_index = torch.randint(0, num_nodes, (2, num_edges))
    return SimpleNamespace(x=torch.randn(num_nodes, 3), edge_index=edge_index)


def batch_graphs(graphs):
    xs, edges, offset = [], [], 0
    for g in graphs:
        xs.append(g.x)
        edges.append(g.edge_index + offset)
        offset += g.x.size(0)
    return SimpleNamespace(x=torch.cat(xs), edge_index=torch.cat(edges, dim=1))


dataset = [random_graph() for _ in range(8)]
loader = [batch_graphs(dataset[i:i + 4]) for i in range(0, len(dataset), 4)]

device = 'cpu'
model = Net().to(device)
optimizer = torch.optim.Adam(model.parameters())

epochs = 2

for e in range(epochs):
    running_loss = 0
    for data in loader:
        optimizer.zero_grad()
        out = model(data)
        loss = F.mse_loss(out, data.x)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    print(running_loss / len(loader))
