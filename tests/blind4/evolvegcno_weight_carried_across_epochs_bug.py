# Source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/305
"""PyTorch Geometric Temporal's EvolveGCN-O example, as the reporter ran it: the layer evolves its
GCN weight with a GRU at every snapshot and keeps the result on the module, `_, self.weight =
self.recurrent_layer(self.weight, self.weight)`, so the weight it starts the next epoch from still
hangs on the graph of the previous epoch, which that epoch's `loss.backward()` freed. The second
epoch's backward reaches it and raises "Trying to backward through the graph a second time" (the
report's traceback, at `loss.backward()`; issue #297 reports the same for EvolveGCN-H). The
layer and the training cell are the reporter's/repository's; torch_geometric's message passing
(GCNConv_Fixed_W, gcn_norm) becomes a dense symmetric-normalised adjacency, and the Chickenpox
snapshots random 20-node graphs with 4 lag features."""
import math

import torch
import torch.nn.functional as F
from torch.nn import GRU


def glorot(value):
    stdv = math.sqrt(6.0 / (value.size(-2) + value.size(-1)))
    with torch.no_grad():
        value.uniform_(-stdv, stdv)


class GCNConv_Fixed_W(torch.nn.Module):
    """GCN propagation with the weight passed in (not trainable inside the layer)."""

    def forward(self, W, x, edge_index, edge_weight=None):
        n = x.size(0)
        if edge_weight is None:
            edge_weight = torch.ones(edge_index.size(1))
        adj = torch.zeros(n, n).index_put((edge_index[1], edge_index[0]), edge_weight, accumulate=True)
        adj = adj + torch.eye(n)
        deg_inv_sqrt = adj.sum(1).pow(-0.5)
        adj = deg_inv_sqrt.view(-1, 1) * adj * deg_inv_sqrt.view(1, -1)
        x = torch.matmul(x, W)
        return adj @ x


class EvolveGCNO(torch.nn.Module):
    def __init__(self, in_channels):
        super(EvolveGCNO, self).__init__()
        self.in_channels = in_channels
        self.initial_weight = torch.nn.Parameter(torch.Tensor(1, in_channels, in_channels))
        self.weight = None
        self._create_layers()
        self.reset_parameters()

    def reset_parameters(self):
        glorot(self.initial_weight)

    def reinitialize_weight(self):
        self.weight = None

    def _create_layers(self):
        self.recurrent_layer = GRU(input_size=self.in_channels, hidden_size=self.in_channels, num_layers=1)
        self.conv_layer = GCNConv_Fixed_W()

    def forward(self, X, edge_index, edge_weight=None):
        if self.weight is None:
            _, self.weight = self.recurrent_layer(self.initial_weight, self.initial_weight)
        else:
            _, self.weight = self.recurrent_layer(self.weight, self.weight)
        X = self.conv_layer(self.weight.squeeze(dim=0), X, edge_index, edge_weight)
        return X


class RecurrentGCN(torch.nn.Module):
    def __init__(self, node_features):
        super(RecurrentGCN, self).__init__()
        self.recurrent = EvolveGCNO(node_features)
        self.linear = torch.nn.Linear(node_features, 1)

    def forward(self, x, edge_index, edge_weight):
        h = self.recurrent(x, edge_index, edge_weight)
        h = F.relu(h)
        h = self.linear(h)
        return h


class Snapshot:
    def __init__(self, x, edge_index, edge_attr, y):
        self.x, self.edge_index, self.edge_attr, self.y = x, edge_index, edge_attr, y


num_nodes = 20
edge_index = torch.randint(0, num_nodes, (2, 60))
train_dataset = [Snapshot(torch.randn(num_nodes, 4), edge_index, torch.rand(60), torch.randn(num_nodes, 1))
                 for _ in range(5)]

model = RecurrentGCN(node_features=4)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
model.train()

for epoch in range(3):
    loss = 0
    for i, snapshot in enumerate(train_dataset):
        y_pred = model(snapshot.x, snapshot.edge_index, snapshot.edge_attr)
        loss = loss + torch.mean((y_pred-snapshot.y)**2)
    loss = loss / (i+1)
    loss.backward()  # expect: GG101
    optimizer.step()
    #optimizer.zero_grad()
    print(epoch, loss.item())
