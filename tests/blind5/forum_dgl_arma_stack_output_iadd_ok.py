# Source: https://github.com/dmlc/dgl/pull/4218
"""The PR's fix: each stack's output is kept, `feats.unsqueeze(-3)`, concatenated along a new stack
dimension and averaged, so no stack's activation output is written in place. Same ARMAConv/ARMA4NC
with the dense message passing, same training loop and random graph."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def glorot(tensor):
    if tensor is not None:
        stdv = math.sqrt(6.0 / (tensor.size(-2) + tensor.size(-1)))
        tensor.data.uniform_(-stdv, stdv)


def zeros(tensor):
    if tensor is not None:
        tensor.data.fill_(0)


class Graph:
    """Dense stand-in for a DGLGraph: adjacency matrix, in-degrees, sum aggregation."""

    def __init__(self, adj):
        self.adj = adj

    def in_degrees(self):
        return self.adj.sum(1)

    def aggregate(self, h):  # g.update_all(fn.copy_u('h', 'm'), fn.sum('m', 'h'))
        return self.adj @ h


class ARMAConv(nn.Module):
    def __init__(self, in_dim, out_dim, num_stacks, num_layers, activation=None, dropout=0.0, bias=True):
        super(ARMAConv, self).__init__()

        self.in_dim = in_dim
        self.out_dim = out_dim
        self.K = num_stacks
        self.T = num_layers
        self.activation = activation
        self.dropout = nn.Dropout(p=dropout)

        # init weight
        self.w_0 = nn.ModuleDict({str(k): nn.Linear(in_dim, out_dim, bias=False) for k in range(self.K)})
        # deeper weight
        self.w = nn.ModuleDict({str(k): nn.Linear(out_dim, out_dim, bias=False) for k in range(self.K)})
        # v
        self.v = nn.ModuleDict({str(k): nn.Linear(in_dim, out_dim, bias=False) for k in range(self.K)})
        # bias
        if bias:
            self.bias = nn.Parameter(torch.Tensor(self.K, self.T, 1, self.out_dim))
        else:
            self.register_parameter('bias', None)

        self.reset_parameters()

    def reset_parameters(self):
        for k in range(self.K):
            glorot(self.w_0[str(k)].weight)
            glorot(self.w[str(k)].weight)
            glorot(self.v[str(k)].weight)
        zeros(self.bias)

    def forward(self, g, feats):
        init_feats = feats
        degs = g.in_degrees().float().clamp(min=1)
        norm = torch.pow(degs, -0.5).to(feats.device).unsqueeze(1)
        output = None

        for k in range(self.K):
            feats = init_feats
            for t in range(self.T):
                feats = feats * norm
                feats = g.aggregate(feats)
                feats = feats * norm

                if t == 0:
                    feats = self.w_0[str(k)](feats)
                else:
                    feats = self.w[str(k)](feats)

                feats += self.dropout(self.v[str(k)](init_feats))
                feats += self.v[str(k)](self.dropout(init_feats))

                if self.bias is not None:
                    feats += self.bias[k][t]

                if self.activation is not None:
                    feats = self.activation(feats)

            if output is None:
                output = feats.unsqueeze(-3)
            else:
                output = torch.cat([output, feats.unsqueeze(-3)], dim=-3)

        return output.mean(dim=-3)


class ARMA4NC(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, num_stacks, num_layers, activation=None, dropout=0.0):
        super(ARMA4NC, self).__init__()

        self.conv1 = ARMAConv(in_dim=in_dim, out_dim=hid_dim, num_stacks=num_stacks, num_layers=num_layers,
                              activation=activation, dropout=dropout)
        self.conv2 = ARMAConv(in_dim=hid_dim, out_dim=out_dim, num_stacks=num_stacks, num_layers=num_layers,
                              activation=activation, dropout=dropout)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, g, feats):
        feats = F.relu(self.conv1(g, feats))
        feats = self.dropout(feats)
        feats = self.conv2(g, feats)
        return feats


def random_graph(n, p=0.1):
    a = (torch.rand(n, n) < p).float()
    return Graph(((a + a.t()) > 0).float())


n_nodes, n_feats, n_classes = 30, 12, 3
g = random_graph(n_nodes)
feats = torch.randn(n_nodes, n_feats)
labels = torch.randint(0, n_classes, (n_nodes,))
train_mask = torch.rand(n_nodes) < 0.5

model = ARMA4NC(in_dim=n_feats, hid_dim=16, out_dim=n_classes, num_stacks=2, num_layers=1,
                activation=nn.ReLU(), dropout=0.5)
loss_fn = nn.CrossEntropyLoss()
opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)

for epoch in range(3):
    model.train()
    logits = model(g, feats)
    train_loss = loss_fn(logits[train_mask], labels[train_mask])
    opt.zero_grad()
    train_loss.backward()
    opt.step()
    print(epoch, train_loss.item())
