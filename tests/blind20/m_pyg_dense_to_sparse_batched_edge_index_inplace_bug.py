# Source: https://github.com/pyg-team/pytorch_geometric/commit/ac3a8e728990c1325e114d6d4cb65128acd6765e
"""PyG ``torch_geometric.utils.dense_to_sparse``, before commit ac3a8e7 "Fix dense_to_sparse
backward pass for three-dimensional input".

A graph-structure-learning model scores node pairs into a batched dense adjacency
``adj`` of shape ``[B, N, N]`` (it requires grad), converts it with ``dense_to_sparse(adj)`` to an
``edge_index`` and edge weights, and runs a GCN layer with those weights. For 3-D input,
``dense_to_sparse`` gathers ``edge_attr = flatten_adj[edge_index[0], edge_index[1]]`` (advanced
indexing saves the index tensors for backward) and then shifts the column indices per graph in
place: ``edge_index[1] += offset[edge_index[0]]``. That bumps the version of the saved index, so
``loss.backward()`` raises "one of the variables needed for gradient computation has been modified
by an inplace operation" (the 2-D branch has no such shift).

Fix (the commit): build the shifted index out of place,
``edge_index = torch.stack([row, col + offset[row]], dim=0)``.
"""
import warnings
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor

torch.manual_seed(0)


# ---- torch_geometric/utils --------------------------------------------------------------------

def cumsum(x: Tensor, dim: int = 0) -> Tensor:
    size = x.size()[:dim] + (x.size(dim) + 1, ) + x.size()[dim + 1:]
    out = x.new_empty(size)
    out.narrow(dim, 0, 1).zero_()
    torch.cumsum(x, dim=dim, out=out.narrow(dim, 1, x.size(dim)))
    return out


def dense_to_sparse(adj: Tensor, mask: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    if adj.dim() < 2 or adj.dim() > 3:
        raise ValueError(f"Dense adjacency matrix 'adj' must be two- or "
                         f"three-dimensional (got {adj.dim()} dimensions)")
    if mask is not None and adj.dim() == 2:
        warnings.warn("Mask should not be provided in case the dense "
                      "adjacency matrix is two-dimensional", stacklevel=2)
        mask = None
    if adj.dim() == 2:
        edge_index = adj.nonzero().t()
        edge_attr = adj[edge_index[0], edge_index[1]]
        return edge_index, edge_attr
    else:
        flatten_adj = adj.view(-1, adj.size(-1))
        if mask is not None:
            flatten_adj = flatten_adj[mask.view(-1)]
        edge_index = flatten_adj.nonzero().t()
        edge_attr = flatten_adj[edge_index[0], edge_index[1]]

        if mask is None:
            offset = torch.arange(
                start=0,
                end=adj.size(0) * adj.size(2),
                step=adj.size(2),
                device=adj.device,
            )
            offset = offset.repeat_interleave(adj.size(1))
        else:
            count = mask.sum(dim=-1)
            offset = cumsum(count)[:-1]
            offset = offset.repeat_interleave(count)

        edge_index[1] += offset[edge_index[0]]

        return edge_index, edge_attr


def scatter_add(src: Tensor, index: Tensor, dim_size: int) -> Tensor:
    out = src.new_zeros((dim_size, ) + src.shape[1:])
    return out.index_add(0, index, src)


# ---- torch_geometric/nn/conv/gcn_conv.py, reduced --------------------------------------------

class GCNConv(torch.nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.lin = torch.nn.Linear(in_channels, out_channels, bias=False)
        self.bias = torch.nn.Parameter(torch.zeros(out_channels))

    def forward(self, x: Tensor, edge_index: Tensor, edge_weight: Tensor) -> Tensor:
        num_nodes = x.size(0)
        row, col = edge_index[0], edge_index[1]
        deg = scatter_add(edge_weight, col, num_nodes) + 1.0
        deg_inv_sqrt = deg.pow(-0.5)
        norm = deg_inv_sqrt[row] * edge_weight * deg_inv_sqrt[col]
        x = self.lin(x)
        out = scatter_add(norm.view(-1, 1) * x[row], col, num_nodes) + x / deg.view(-1, 1)
        return out + self.bias


# ---- the user's model: learn the graph, then message passing ----------------------------------

class GraphLearner(torch.nn.Module):
    def __init__(self, in_channels, hidden):
        super().__init__()
        self.query = torch.nn.Linear(in_channels, hidden)
        self.key = torch.nn.Linear(in_channels, hidden)
        self.threshold = 0.5

    def forward(self, x):  # x: [B, N, F]
        scores = torch.sigmoid(self.query(x) @ self.key(x).transpose(1, 2))
        adj = F.relu(scores - self.threshold)  # sparsify: weak pairs become exact zeros
        return adj


class Net(torch.nn.Module):
    def __init__(self, in_channels, hidden, num_classes):
        super().__init__()
        self.graph_learner = GraphLearner(in_channels, hidden)
        self.conv1 = GCNConv(in_channels, hidden)
        self.conv2 = GCNConv(hidden, num_classes)

    def forward(self, x):
        B, N, _ = x.shape
        adj = self.graph_learner(x)
        edge_index, edge_weight = dense_to_sparse(adj)
        h = x.reshape(B * N, -1)
        h = F.relu(self.conv1(h, edge_index, edge_weight))
        h = F.dropout(h, p=0.5, training=self.training)
        h = self.conv2(h, edge_index, edge_weight)
        return F.log_softmax(h, dim=-1)


model = Net(in_channels=8, hidden=16, num_classes=3)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)

loader = [(torch.randn(4, 6, 8), torch.randint(0, 3, (4 * 6, ))) for _ in range(3)]


def train():
    model.train()
    total_loss = 0
    for x, y in loader:
        optimizer.zero_grad()
        out = model(x)
        loss = F.nll_loss(out, y)
        loss.backward()  # expect: GG103
        optimizer.step()
        total_loss += float(loss)
    return total_loss / len(loader)


for epoch in range(1, 3):
    loss = train()
    print(f'Epoch: {epoch:02d}, Loss: {loss:.4f}')
