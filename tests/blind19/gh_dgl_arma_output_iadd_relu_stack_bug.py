# Source: https://github.com/dmlc/dgl/issues/4202
"""DGL example examples/pytorch/arma (citation.py + model.py): node classification on
a citation graph with ARMA graph convolutions (ARMA4NC = two ARMAConv layers, each with
K parallel stacks of T propagation layers and an activation).

ARMAConv.forward keeps the first stack's result as `output = feats`, which is the output
of `self.activation` (nn.ReLU: ReluBackward0 saves its result), and then accumulates the
other stacks with `output += feats`. The in-place add bumps the version of the ReLU
output, so `train_loss.backward()` raises "one of the variables needed for gradient
computation has been modified by an inplace operation: [... [2708, 7]], which is output 0
of ReluBackward0" (the report; here the graph is tiny).

The right fix (the _ok twin): `output = output + feats`.
DGL is replaced by a minimal graph stand-in with the same API the example uses
(local_scope, in_degrees, ndata, update_all(copy_u, sum)).
"""
import argparse
import contextlib
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


# ---- minimal stand-in for dgl / dgl.function -------------------------------------
class fn:
    @staticmethod
    def copy_u(src, out):
        return ('copy_u', src, out)

    @staticmethod
    def sum(msg, out):
        return ('sum', msg, out)


class DGLGraph:
    def __init__(self, src, dst, num_nodes):
        self.src, self.dst, self.n = src, dst, num_nodes
        self.ndata = {}

    @contextlib.contextmanager
    def local_scope(self):
        saved = dict(self.ndata)
        try:
            yield
        finally:
            self.ndata = saved

    def in_degrees(self):
        return torch.bincount(self.dst, minlength=self.n)

    def update_all(self, message_func, reduce_func):
        _, src_field, _ = message_func
        _, _, out_field = reduce_func
        h = self.ndata[src_field]
        msg = h[self.src]
        self.ndata[out_field] = torch.zeros_like(h).index_add(0, self.dst, msg)


def load_citation(num_nodes=30, n_features=12, n_classes=7):
    src = torch.randint(0, num_nodes, (80,))
    dst = torch.randint(0, num_nodes, (80,))
    # undirected graph, as the example assumes
    g = DGLGraph(torch.cat([src, dst]), torch.cat([dst, src]), num_nodes)
    feats = torch.randn(num_nodes, n_features)
    labels = torch.randint(0, n_classes, (num_nodes,))
    idx = torch.randperm(num_nodes)
    return g, feats, labels, n_classes, idx[:12], idx[12:20], idx[20:]


# ---- model.py ---------------------------------------------------------------------
def glorot(tensor):
    if tensor is not None:
        stdv = math.sqrt(6.0 / (tensor.size(-2) + tensor.size(-1)))
        tensor.data.uniform_(-stdv, stdv)


def zeros(tensor):
    if tensor is not None:
        tensor.data.fill_(0)


class ARMAConv(nn.Module):
    def __init__(self, in_dim, out_dim, num_stacks, num_layers, activation=None,
                 dropout=0.0, bias=True):
        super(ARMAConv, self).__init__()
        self.in_dim = in_dim
        self.out_dim = out_dim
        self.K = num_stacks
        self.T = num_layers
        self.activation = activation
        self.dropout = nn.Dropout(p=dropout)
        self.w_0 = nn.ModuleDict({str(k): nn.Linear(in_dim, out_dim, bias=False) for k in range(self.K)})
        self.w = nn.ModuleDict({str(k): nn.Linear(out_dim, out_dim, bias=False) for k in range(self.K)})
        self.v = nn.ModuleDict({str(k): nn.Linear(in_dim, out_dim, bias=False) for k in range(self.K)})
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
        with g.local_scope():
            init_feats = feats
            degs = g.in_degrees().float().clamp(min=1)
            norm = torch.pow(degs, -0.5).to(feats.device).unsqueeze(1)
            output = None

            for k in range(self.K):
                feats = init_feats
                for t in range(self.T):
                    feats = feats * norm
                    g.ndata['h'] = feats
                    g.update_all(fn.copy_u('h', 'm'), fn.sum('m', 'h'))
                    feats = g.ndata.pop('h')
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
                    output = feats
                else:
                    output += feats

            return output / self.K


class ARMA4NC(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, num_stacks, num_layers,
                 activation=None, dropout=0.0):
        super(ARMA4NC, self).__init__()
        self.conv1 = ARMAConv(in_dim=in_dim, out_dim=hid_dim, num_stacks=num_stacks,
                              num_layers=num_layers, activation=activation, dropout=dropout)
        self.conv2 = ARMAConv(in_dim=hid_dim, out_dim=out_dim, num_stacks=num_stacks,
                              num_layers=num_layers, activation=activation, dropout=dropout)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, g, feats):
        feats = F.relu(self.conv1(g, feats))
        feats = self.dropout(feats)
        feats = self.conv2(g, feats)
        return feats


# ---- citation.py ------------------------------------------------------------------
def main(args):
    graph, feats, labels, n_classes, train_idx, val_idx, test_idx = load_citation()
    n_features = feats.shape[-1]

    model = ARMA4NC(in_dim=n_features, hid_dim=args.hid_dim, out_dim=n_classes,
                    num_stacks=args.num_stacks, num_layers=args.num_layers,
                    activation=nn.ReLU(), dropout=args.dropout)
    loss_fn = nn.CrossEntropyLoss()
    opt = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.lamb)

    best_val_acc = 0
    for epoch in range(args.epochs):
        model.train()
        logits = model(graph, feats)
        train_loss = loss_fn(logits[train_idx], labels[train_idx])
        train_acc = torch.sum(logits[train_idx].argmax(dim=1) == labels[train_idx]).item() / len(train_idx)

        opt.zero_grad()
        train_loss.backward()  # expect: GG103
        opt.step()

        model.eval()
        with torch.no_grad():
            valid_loss = loss_fn(logits[val_idx], labels[val_idx])
            valid_acc = torch.sum(logits[val_idx].argmax(dim=1) == labels[val_idx]).item() / len(val_idx)
        best_val_acc = max(best_val_acc, valid_acc)
        print(f"Epoch {epoch} | Train Acc: {train_acc:.4f} | Train Loss: {train_loss.item():.4f} "
              f"| Valid Acc: {valid_acc:.4f} | Valid loss: {valid_loss.item():.4f}")
    return best_val_acc


if __name__ == "__main__":
    torch.manual_seed(0)
    parser = argparse.ArgumentParser(description='ARMA GCN')
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--lamb', type=float, default=5e-4)
    parser.add_argument('--hid-dim', type=int, default=16)
    parser.add_argument('--num-stacks', type=int, default=2)
    parser.add_argument('--num-layers', type=int, default=1)
    parser.add_argument('--dropout', type=float, default=0.75)
    args = parser.parse_args([])
    acc_lists = []
    acc_lists.append(main(args))
    print(acc_lists)
