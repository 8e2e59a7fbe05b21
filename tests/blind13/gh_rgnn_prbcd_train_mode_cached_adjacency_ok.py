# Source: https://github.com/sigeisler/robustness_of_gnns_at_scale/issues/4
"""robustness_of_gnns_at_scale's PRBCD attack on a GCN in training mode, fixed as the maintainer
suggested: switch off the caching of the preprocessed adjacency (do_cache_adj_prep=False), so each
attack step normalizes the current perturbed edge weights afresh and its backward walks only its
own graph. torch_geometric, torch_sparse and the dataset are small dense stand-ins written here.
"""
import collections
from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch import nn


class ChainableGCNConv(nn.Module):
    """Dense stand-in for the repository's GCNConv subclass (normalize=False: done once by GCN)."""
    def __init__(self, in_channels, out_channels, bias=True):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias else None

    def forward(self, arguments):
        if len(arguments) == 2:
            x, edge_index = arguments
            edge_weight = None
        elif len(arguments) == 3:
            x, edge_index, edge_weight = arguments
        else:
            raise NotImplementedError("This method is just implemented for two or three arguments")
        h = self.lin(x)
        if edge_weight is None:
            edge_weight = torch.ones(edge_index.size(1))
        row, col = edge_index
        out = torch.zeros_like(h).index_add(0, col, h[row] * edge_weight.unsqueeze(-1))
        if self.bias is not None:
            out = out + self.bias
        return out


def add_remaining_self_loops(edge_idx, edge_weight, fill_value, num_nodes):
    mask = edge_idx[0] != edge_idx[1]
    loop = torch.arange(num_nodes)
    edge_idx = torch.cat([edge_idx[:, mask], torch.stack([loop, loop])], dim=1)
    edge_weight = torch.cat([edge_weight[mask], torch.full((num_nodes,), fill_value)])
    return edge_idx, edge_weight


class GCN(nn.Module):
    def __init__(self, n_features, n_classes, activation=nn.ReLU(), n_filters=16, dropout=0.5,
                 do_cache_adj_prep=True, do_normalize_adj_once=True, add_self_loops=True, **kwargs):
        super().__init__()
        self.n_filters = [n_filters]
        self.activation = activation
        self.n_features = n_features
        self.n_classes = n_classes
        self.dropout = dropout
        self.do_cache_adj_prep = do_cache_adj_prep
        self.do_normalize_adj_once = do_normalize_adj_once
        self.add_self_loops = add_self_loops
        self.adj_preped = None
        self.layers = self._build_layers()

    def _build_layers(self):
        modules = nn.ModuleList([
            nn.Sequential(collections.OrderedDict([
                (f'gcn_{idx}', ChainableGCNConv(in_channels, out_channels)),
                (f'activation_{idx}', self.activation),
                (f'dropout_{idx}', nn.Dropout(p=self.dropout))]))
            for idx, (in_channels, out_channels)
            in enumerate(zip([self.n_features] + self.n_filters[:-1], self.n_filters))
        ])
        idx = len(modules)
        modules.append(nn.Sequential(collections.OrderedDict([
            (f'gcn_{idx}', ChainableGCNConv(self.n_filters[-1], self.n_classes)),
            (f'softmax_{idx}', nn.LogSoftmax(dim=1))])))
        return modules

    def forward(self, data=None, adj=None):
        x, edge_idx, edge_weight = data, adj[0], adj[1]
        edge_idx, edge_weight = self._cache_if_option_is_set(self._preprocess_adjacency_matrix,
                                                             x, edge_idx, edge_weight)
        for layer in self.layers:
            x = layer((x, edge_idx, edge_weight))
        return x

    def release_cache(self):
        self.adj_preped = None

    def _preprocess_adjacency_matrix(self, x, edge_idx, edge_weight=None):
        return self._convert_and_normalize(x, edge_idx, edge_weight)

    def _cache_if_option_is_set(self, callable: Callable[[Any], Any], *inputs) -> Any:
        if self.training and self.adj_preped is not None:
            return self.adj_preped
        else:
            adj_preped = callable(*inputs)

        if self.training and self.do_cache_adj_prep and self.do_normalize_adj_once:
            self.adj_preped = adj_preped

        return adj_preped

    def _convert_and_normalize(self, x, edge_idx, edge_weight=None):
        if self.do_normalize_adj_once:
            num_nodes = x.shape[0]
            if edge_weight is None:
                edge_weight = torch.ones((edge_idx.size(1), ), dtype=torch.float32)
            if self.add_self_loops:
                edge_idx, edge_weight = add_remaining_self_loops(edge_idx, edge_weight, 1., num_nodes)
            row, col = edge_idx
            deg = torch.zeros(num_nodes).scatter_add(0, col, edge_weight)
            deg_inv_sqrt = deg.pow_(-0.5)
            deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float('inf'), 0)
            edge_weight = deg_inv_sqrt[row] * edge_weight * deg_inv_sqrt[col]
        return edge_idx, edge_weight


def grad_with_checkpoint(outputs, inputs):
    inputs = (inputs,) if isinstance(inputs, torch.Tensor) else tuple(inputs)
    for input in inputs:
        if not input.is_leaf:
            input.retain_grad()
    torch.autograd.backward(outputs)
    grad_outputs = []
    for input in inputs:
        grad_outputs.append(input.grad.clone())
        input.grad.zero_()
    return grad_outputs


class PRBCD:
    """Projected randomized block coordinate descent, on a fixed block of candidate edges."""
    def __init__(self, attr, edge_index, edge_weight, labels, model, n_candidates=12, lr=0.1):
        self.attr, self.edge_index, self.edge_weight, self.labels = attr, edge_index, edge_weight, labels
        self.attacked_model = model
        n = attr.shape[0]
        self.current_search_space = torch.randint(0, n, (2, n_candidates))
        self.perturbed_edge_weight = torch.full((n_candidates,), 1e-3)
        self.lr = lr

    def get_modified_adj(self):
        edge_index = torch.cat((self.edge_index, self.current_search_space), dim=-1)
        edge_weight = torch.cat((self.edge_weight, self.perturbed_edge_weight))
        return edge_index, edge_weight

    def calculate_loss(self, logits, labels):
        # the user's loss: needs the model in training mode
        return -F.nll_loss(logits, labels)

    def project(self, budget, values):
        return values.clamp(0, 1) * min(1.0, budget / max(values.sum().item(), 1e-8))

    def attack(self, budget, epochs):
        self.attacked_model.train()
        for epoch in range(epochs):
            self.perturbed_edge_weight.requires_grad = True
            edge_index, edge_weight = self.get_modified_adj()
            logits = self.attacked_model(data=self.attr, adj=(edge_index, edge_weight))
            loss = self.calculate_loss(logits, self.labels)
            gradient = grad_with_checkpoint(loss, self.perturbed_edge_weight)[0]
            with torch.no_grad():
                self.perturbed_edge_weight = self.perturbed_edge_weight + self.lr * budget * gradient
                self.perturbed_edge_weight = self.project(budget, self.perturbed_edge_weight)
        return self.get_modified_adj()


n, d, c = 10, 8, 3
attr = torch.randn(n, d)
edge_index = torch.randint(0, n, (2, 30))
edge_weight = torch.ones(30)
labels = torch.randint(0, c, (n,))
gcn = GCN(n_features=d, n_classes=c, n_filters=16, dropout=0.5, do_cache_adj_prep=False)
attack = PRBCD(attr, edge_index, edge_weight, labels, gcn)
pert_edge_index, pert_edge_weight = attack.attack(budget=3, epochs=4)
