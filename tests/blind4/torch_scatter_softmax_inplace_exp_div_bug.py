# Source: https://github.com/rusty1s/pytorch_scatter/issues/119
"""Backward through torch_scatter 2.0.3's scatter_softmax in a graph attention (GAT) project: the
function computes `recentered_scores.exp_()` and returns `recentered_scores_exp.div_(...)`. exp_
saves its result for its backward, and div_ then overwrites that result in place, so backward
fails ("RuntimeError on backward pass through scatter_softmax ... one of the variables needed for
gradient computation has been modified by an inplace operation"; the reporter: scatter_softmax
calls in-place functions; the fix divides out of place). scatter_softmax
is torch_scatter's; its scatter_max/scatter_sum are written with torch's scatter_reduce/scatter_add.
The reporter's minimal example runs first, then a small GAT layer that normalises edge scores per
target node with scatter_softmax, on a random graph."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def scatter_sum(src, index, dim=-1, dim_size=None):
    dim_size = int(index.max()) + 1 if dim_size is None else dim_size
    out = torch.zeros(dim_size, *src.shape[1:]) if dim == 0 else torch.zeros(dim_size)
    return out.scatter_add(dim, index, src)


def scatter_max(src, index, dim=-1, dim_size=None):
    dim_size = int(index.max()) + 1 if dim_size is None else dim_size
    out = torch.full((dim_size, *src.shape[1:]) if dim == 0 else (dim_size,), float('-inf'))
    return out.scatter_reduce(dim, index, src, reduce='amax', include_self=False), None


def scatter_softmax(src, index, dim=-1, eps=1e-12):
    if not torch.is_floating_point(src):
        raise ValueError('`scatter_softmax` can only be computed over tensors '
                         'with floating point data types.')

    max_value_per_index = scatter_max(src, index, dim=dim)[0]
    max_per_src_element = max_value_per_index.gather(dim, index)

    recentered_scores = src - max_per_src_element
    recentered_scores_exp = recentered_scores.exp_()

    sum_per_index = scatter_sum(recentered_scores_exp, index, dim)
    normalizing_constants = sum_per_index.add_(eps).gather(dim, index)

    return recentered_scores_exp.div_(normalizing_constants)


class GATLayer(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim, bias=False)
        self.att_src = nn.Parameter(torch.randn(out_dim) * 0.1)
        self.att_dst = nn.Parameter(torch.randn(out_dim) * 0.1)

    def forward(self, x, edge_index):
        src, dst = edge_index
        h = self.lin(x)
        scores = F.leaky_relu((h[src] * self.att_src).sum(-1) + (h[dst] * self.att_dst).sum(-1), 0.2)
        alpha = scatter_softmax(scores, dst, dim=0)
        out = torch.zeros_like(h).index_add(0, dst, alpha.unsqueeze(-1) * h[src])
        return F.elu(out)


# Set seed for reproducible behavior
torch.manual_seed(0)

# Generate src and index tensors
src = torch.randn(6, requires_grad=True)
index = torch.tensor([0, 1, 0, 1, 2, 1])

# Get softmax
softmax_out = scatter_softmax(src, index)

# Sum to allow backward call
out = torch.sum(softmax_out)

# Call backward
out.backward()  # expect: GG103

# The GAT project: node classification on a random graph
num_nodes = 10
x = torch.randn(num_nodes, 8)
edge_index = torch.cat([torch.randint(0, num_nodes, (2, 30)), torch.arange(num_nodes).repeat(2, 1)], dim=1)
y = torch.randint(0, 3, (num_nodes,))
layer, classifier = GATLayer(8, 16), nn.Linear(16, 3)
optimizer = torch.optim.Adam(list(layer.parameters()) + list(classifier.parameters()), lr=0.01)
for epoch in range(2):
    loss = F.cross_entropy(classifier(layer(x, edge_index)), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
