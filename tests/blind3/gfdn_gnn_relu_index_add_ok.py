# Source: https://github.com/yujianke100/GFDN/issues/4
"""Training GFDN with the author's fix from the thread: the GNN layers' F.relu is replaced by
custom_relu, torch.where(x > 0, x, 0), whose backward keeps only the condition, so GNN.forward's
index assignments `x[edge_u_id] = x[edge_u_id] + h[i]` no longer overwrite a tensor saved for
the backward. A dense normalised-adjacency GCNConv written here stands in for torch_geometric's,
the k-core CORE features and the edge-label head are left out, and a random graph with random
labels stands in for the datasets; a cross-entropy stands in for the focal loss."""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Linear, Parameter

args = SimpleNamespace(gnn='gcn', ll=1.0, al=0.1, kl=0.01)


class GCNConv(nn.Module):
    """x' = D^-1/2 (A + I) D^-1/2 x W"""
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin = Linear(in_channels, out_channels)

    def forward(self, x, edge_index):
        n = x.size(0)
        adj = torch.eye(n)
        adj[edge_index[0], edge_index[1]] = 1.0
        d = adj.sum(1).pow(-0.5)
        return (d[:, None] * adj * d[None, :]) @ self.lin(x)


def custom_relu(x):
    return torch.where(x > 0, x, torch.tensor(0.0))


class GCN_NET(torch.nn.Module):
    def __init__(self, in_feature, out_feature):
        super(GCN_NET, self).__init__()
        self.gcn = GCNConv(in_feature, out_feature)

    def forward(self, x, edge_index, active=True):
        x = self.gcn(x, edge_index)
        if active:
            x = custom_relu(x)
        return x


class AE(nn.Module):
    def __init__(self, n_enc, hidden, n_input, n_z):
        super(AE, self).__init__()
        self.enc_in = Linear(n_input, n_enc)
        self.hidden_enc = nn.ModuleList([Linear(n_enc, n_enc) for i in range(hidden)])
        self.z_layer = Linear(n_enc, n_z)
        self.dec_in = Linear(n_z, n_enc)
        self.hidden_dec = nn.ModuleList([Linear(n_enc, n_enc) for i in range(hidden)])
        self.x_bar_layer = Linear(n_enc, n_input)

    def forward(self, x):
        enc_result = []
        enc_result.append(F.relu(self.enc_in(x)))
        for layer in self.hidden_enc:
            enc_result.append(F.relu(layer(enc_result[-1])))
        z = self.z_layer(enc_result[-1])
        dec = F.relu(self.dec_in(z))
        for layer in self.hidden_dec:
            dec = F.relu(layer(dec))
        x_bar = self.x_bar_layer(dec)
        return x_bar, enc_result, z


class TL(nn.Module):
    def __init__(self, n_clusters):
        super(TL, self).__init__()
        self.to_label1 = Linear(n_clusters, n_clusters//2)
        self.to_label2 = Linear(n_clusters//2, 2)

    def forward(self, x):
        x = F.relu(self.to_label1(x))
        return self.to_label2(x)


class GNN(nn.Module):
    def __init__(self, n_input, n_clusters, n_enc, hidden, n_z):
        super(GNN, self).__init__()
        GNN_NET = GCN_NET
        self.ae = AE(n_enc, hidden, n_input, n_z)
        self.tl = TL(n_clusters=n_clusters)
        self.gnn_in = GNN_NET(n_input, n_enc)
        self.hidden_gnn = nn.ModuleList([GNN_NET(n_enc, n_enc) for i in range(hidden)])
        self.gnn_nz = GNN_NET(n_enc, n_z)
        self.gnn_cluster = GNN_NET(n_z, n_clusters)
        self.cluster_layer = Parameter(torch.Tensor(n_clusters, n_z))
        torch.nn.init.xavier_normal_(self.cluster_layer.data)
        self.v = 1

    def forward(self, x, edge_u_x, edge_u_id, edge_index, train=True):
        q = 0
        x_bar, h, z = self.ae(edge_u_x)
        x = self.gnn_in(x, edge_index)
        for i, layer in enumerate(self.hidden_gnn):
            x[edge_u_id] = x[edge_u_id] + h[i]
            x = layer(x, edge_index)
        x[edge_u_id] = x[edge_u_id] + h[-1]
        x = self.gnn_nz(x, edge_index)
        x[edge_u_id] = x[edge_u_id] + z
        x = self.gnn_cluster(x, edge_index, active=False)

        x = torch.sigmoid(x[edge_u_id])

        if(train):
            q = 1.0 / (1.0 + torch.sum(torch.pow(z.unsqueeze(1) - self.cluster_layer, 2), 2) / self.v)
            q = q.pow((self.v + 1.0) / 2.0)
            q = (q.t() / torch.sum(q, 1)).t()
        return x, x_bar, q


def target_distribution(q):
    weight = q**2 / q.sum(0)
    return (weight.t() / weight.sum(1)).t()


def train(model, optimizer, x, edge_index, edge_u_id, u_l_y):
    model.train()
    optimizer.zero_grad()
    edge_u_x = x[edge_u_id]
    x, x_bar, q = model(x, edge_u_x, edge_u_id, edge_index)
    p = target_distribution(q)

    loss_pre_l = model.tl(x)
    label_loss = F.cross_entropy(loss_pre_l, u_l_y)
    ae_loss = F.mse_loss(x_bar, edge_u_x)
    kl_loss = F.kl_div(q.log(), p, reduction='batchmean')

    loss = args.ll * label_loss + args.al * ae_loss + args.kl * kl_loss
    loss.backward()
    optimizer.step()
    return loss.item()


n_nodes, n_input = 12, 8
model = GNN(n_input=n_input, n_clusters=4, n_enc=16, hidden=1, n_z=6)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(n_nodes, n_input)
edge_index = torch.randint(0, n_nodes, (2, 30))
edge_u_id = torch.arange(0, 6)  # the user nodes with edges
u_l_y = torch.randint(0, 2, (6,))
for epoch in range(2):
    train(model, optimizer, x, edge_index, edge_u_id, u_l_y)
