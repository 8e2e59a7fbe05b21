# Source: https://github.com/QueuQ/CGLB/issues/16
"""CGLB's GCGL benchmark, TWP baseline (twp_model.NET.observe_clsIL) with a GCN backbone whose
hidden size is larger than the input size: GraphConv's "aggregate first, then multiply W" branch
computes the topology-attention logits `e` from the raw input features, before any weight, so for
the first layer `e_soft` depends on no parameter. When TWP moves to the second task it backwards
the old task's loss (retain_graph=True) for the loss Fisher terms and then `eloss =
torch.norm(elist[0])` for the attention Fisher terms: torch raises "element 0 of tensors does not
require grad and does not have a grad_fn" (the report's traceback, twp_model.py line 188); the
old-task loss's `retain_graph=True` is then left unused (GG203). DGL,
dgllife and the molecule loaders are small dense stand-ins written here, on CPU, one batch per task.
"""
import numpy as np
import torch
import torch as th
from torch import nn
from torch.nn import init
from torch.optim import Adam
import torch.nn.functional as F


# ---- DGL stand-ins: a dense batched graph and edge_softmax ----
class DenseGraph(object):
    def __init__(self, adj, graph_ids):
        self.adj = adj                  # adj[dst, src] = 1 for an edge src -> dst
        self.graph_ids = graph_ids
        self.ndata = {}

    def local_var(self):
        return self

    def out_degrees(self):
        return self.adj.sum(0)

    def in_degrees(self):
        return self.adj.sum(1)

    def to(self, device):
        return self


def apply_edges_attention(graph, h):
    # {'e': sum(h_src * tanh(h_dst), 1)} on every edge, dense: e[dst, src]
    return th.matmul(th.tanh(h), h.t()) * graph.adj


def edge_softmax(graph, e):
    masked = e.masked_fill(graph.adj == 0, float('-inf'))
    return th.nan_to_num(th.softmax(masked, dim=1)) * graph.adj


def copy_src_sum(graph, h):
    return th.matmul(graph.adj, h)


# ---- GCGL/Backbones/graphconv.py ----
class GraphConv(nn.Module):
    def __init__(self, in_feats, out_feats, norm='both', weight=True, bias=True, activation=None):
        super(GraphConv, self).__init__()
        self._in_feats = in_feats
        self._out_feats = out_feats
        self._norm = norm
        if weight:
            self.weight = nn.Parameter(th.Tensor(in_feats, out_feats))
        else:
            self.register_parameter('weight', None)
        if bias:
            self.bias = nn.Parameter(th.Tensor(out_feats))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()
        self._activation = activation
        self.leaky_relu = nn.LeakyReLU(0.2)

    def reset_parameters(self):
        if self.weight is not None:
            init.xavier_uniform_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, graph, feat, weight=None):
        graph = graph.local_var()
        if self._norm == 'both':
            degs = graph.out_degrees().float().clamp(min=1)
            norm = th.pow(degs, -0.5)
            shp = norm.shape + (1,) * (feat.dim() - 1)
            norm = th.reshape(norm, shp)
            feat = feat * norm
        if weight is None:
            weight = self.weight

        if self._in_feats > self._out_feats:
            # mult W first to reduce the feature size for aggregation.
            if weight is not None:
                feat = th.matmul(feat, weight)
            e = self.leaky_relu(apply_edges_attention(graph, feat))
            e_soft = edge_softmax(graph, e)
            rst = copy_src_sum(graph, feat)
        else:
            # aggregate first then mult W
            e = self.leaky_relu(apply_edges_attention(graph, feat))
            e_soft = edge_softmax(graph, e)
            rst = copy_src_sum(graph, feat)
            if weight is not None:
                rst = th.matmul(rst, weight)

        if self._norm != 'none':
            degs = graph.in_degrees().float().clamp(min=1)
            norm = th.pow(degs, -0.5) if self._norm == 'both' else 1.0 / degs
            shp = norm.shape + (1,) * (feat.dim() - 1)
            rst = rst * th.reshape(norm, shp)
        if self.bias is not None:
            rst = rst + self.bias
        if self._activation is not None:
            rst = self._activation(rst)
        return rst, e_soft


# ---- GCGL/Backbones/gnns.py GCN (dgllife GCNPredictor shape) ----
class GCN(nn.Module):
    def __init__(self, in_feats, hidden_feats, n_tasks):
        super(GCN, self).__init__()
        self.gnn_layers = nn.ModuleList()
        for out_feats in hidden_feats:
            self.gnn_layers.append(GraphConv(in_feats, out_feats, activation=F.relu))
            in_feats = out_feats
        self.predict = nn.Linear(2 * in_feats, n_tasks)

    def forward(self, bg, feats):
        elist = []
        for gnn in self.gnn_layers:
            feats, e = gnn(bg, feats)
            elist.append(e)
        n_graphs = int(bg.graph_ids.max()) + 1
        pooled = []
        for g in range(n_graphs):
            h = feats[bg.graph_ids == g]
            pooled.append(th.cat([h.sum(0), h.max(0)[0]]))
        return self.predict(th.stack(pooled)), elist


def predict(args, model, bg):
    node_feats = bg.ndata.pop(args['node_data_field'])
    return model(bg, node_feats)


# ---- GCGL/Baselines/twp_model.py (class-IL) ----
class NET(torch.nn.Module):
    def __init__(self, model, args):
        super(NET, self).__init__()
        self.net = model
        self.optimizer = Adam(model.parameters(), lr=args['lr'])
        self.current_task = 0
        self.fisher_loss = {}
        self.fisher_att = {}
        self.optpar = {}
        self.data_loader = None
        self.lambda_l = args['twp_args']['lambda_l']
        self.lambda_t = args['twp_args']['lambda_t']
        self.beta = args['twp_args']['beta']

    def observe_clsIL(self, data_loader, loss_criterion, task_i, args):
        self.net.train()
        if task_i != self.current_task:
            self.optimizer.zero_grad()
            self.fisher_loss[self.current_task] = []
            self.fisher_att[self.current_task] = []
            self.optpar[self.current_task] = []
            clss_old = []
            for tid in range(task_i):
                clss_old.extend(args['tasks'][tid])
            for batch_id, batch_data in enumerate(self.data_loader[self.current_task]):
                smiles, bg, labels, masks = batch_data
                logits, elist = predict(args, self.net, bg)
                n_per_cls = [(labels == j).sum() for j in clss_old]
                loss_w_ = torch.tensor([1. / max(i, 1) for i in n_per_cls])
                labels = labels.clone()
                for i, c in enumerate(clss_old):
                    labels[labels == c] = i
                loss = loss_criterion(logits[:, clss_old], labels.long(), weight=loss_w_).float()
                loss.backward(retain_graph=True)  # expect: GG203
                for p in self.net.parameters():
                    pd = p.data.clone()
                    if p.grad is not None:
                        self.fisher_loss[self.current_task].append(p.grad.data.clone().pow(2))
                        self.optpar[self.current_task].append(pd)
                if isinstance(elist, list):
                    eloss = torch.norm(elist[0])
                else:
                    eloss = elist
                eloss.backward()  # expect: GG104
                for p in self.net.parameters():
                    if p.grad is not None:
                        self.fisher_att[self.current_task].append(p.grad.data.clone().pow(2))
                self.current_task = task_i

        clss = []
        for tid in range(task_i + 1):
            clss.extend(args['tasks'][tid])
        for batch_id, batch_data in enumerate(data_loader[task_i]):
            smiles, bg, labels, masks = batch_data
            logits, elist = predict(args, self.net, bg)
            n_per_cls = [(labels == j).sum() for j in clss]
            loss_w_ = torch.tensor([1. / max(i, 1) for i in n_per_cls])
            labels = labels.clone()
            for i, c in enumerate(clss):
                labels[labels == c] = i
            loss = loss_criterion(logits[:, clss], labels.long(), weight=loss_w_).float()
            loss.backward(retain_graph=True)
            grad_norm = 0
            for p in self.net.parameters():
                if p.grad is not None:
                    grad_norm += torch.norm(p.grad.data.clone(), p=1)
            for tt in range(task_i):
                i = 0
                for p in self.net.parameters():
                    if p.grad is not None:
                        l = self.lambda_l * self.fisher_loss[tt][i] + self.lambda_t * self.fisher_att[tt][i]
                        l = l * (p - self.optpar[tt][i]).pow(2)
                        loss = loss + l.sum()
                        i += 1
            loss = loss + self.beta * grad_norm
            loss.backward()
            self.optimizer.step()


class MoleculeLoader(object):
    """dgllife DataLoader stand-in: collates a fresh batched graph on every pass."""
    def __init__(self, classes, n_graphs=3, nodes=5, in_feats=4):
        n = n_graphs * nodes
        self.adj = torch.zeros(n, n)
        self.graph_ids = torch.arange(n_graphs).repeat_interleave(nodes)
        for g in range(n_graphs):
            for k in range(nodes - 1):
                a, b = g * nodes + k, g * nodes + k + 1
                self.adj[a, b] = self.adj[b, a] = 1.0
        self.feats = torch.randn(n, in_feats)
        self.labels = torch.tensor(classes)[torch.randint(len(classes), (n_graphs,))]
        self.smiles = ["C" * nodes] * n_graphs

    def __iter__(self):
        bg = DenseGraph(self.adj, self.graph_ids)
        bg.ndata['h'] = self.feats.clone()
        yield self.smiles, bg, self.labels, torch.ones(len(self.smiles))


def pipeline_class_IL(args):
    model = GCN(args['in_feats'], args['gcn_hidden_feats'], args['n_cls'])
    life_model = NET(model, args)
    data_loader = [MoleculeLoader(task) for task in args['tasks']]
    life_model.data_loader = data_loader
    loss_criterion = F.cross_entropy
    for task_i in range(len(args['tasks'])):
        for epoch in range(args['num_epochs']):
            life_model.observe_clsIL(data_loader, loss_criterion, task_i, args)
        print("task", task_i, "done")


if __name__ == "__main__":
    args = {'lr': 1e-3, 'num_epochs': 1, 'in_feats': 4, 'gcn_hidden_feats': [8, 8], 'n_cls': 4,
            'tasks': [[0, 1], [2, 3]], 'node_data_field': 'h',
            'twp_args': {'lambda_l': 100., 'lambda_t': 100., 'beta': 0.01}}
    pipeline_class_IL(args)
