# Source: https://github.com/pyg-team/pytorch_geometric/commit/176e61d8b212aee4d4172200ee4dd97fddfc361b
"""Fixed twin (the commit's fix: `out = out + self.propagate(...)`, out of place). pytorch_geometric, torch_geometric/nn/conv/film_conv.py before "fix filmconv backward error due to
in-place ops", run by examples/film.py (FiLM GNN on PPI): `FiLMConv.forward` computes the skip term
`out = self.act(gamma * self.lin_skip(x[1]) + beta)` with the default `act=ReLU()`, then adds the
messages in place, `out += self.propagate(...)`. ReLU saved its output, so `loss.backward()` raises
"one of the variables needed for gradient computation has been modified by an inplace operation".
Fix (the commit's): `out = out + self.propagate(...)`. The MessagePassing base (mean aggregation by
index_add), the PPI dataset/DataLoader and sklearn's f1_score are small stand-ins; random graphs, CPU.
"""
import copy

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import BatchNorm1d, Linear, ModuleList, ReLU


# ---- stand-in: torch_geometric.nn.MessagePassing (mean aggregation, flow source_to_target) ----
class MessagePassing(torch.nn.Module):
    def __init__(self, aggr='mean', **kwargs):
        super().__init__()
        self.aggr = aggr

    def propagate(self, edge_index, x, beta, gamma, size=None):
        src, dst = edge_index[0], edge_index[1]
        msg = self.message(x[src], beta[dst], gamma[dst])
        out = torch.zeros(x.size(0), msg.size(1), dtype=msg.dtype).index_add(0, dst, msg)
        count = torch.zeros(x.size(0)).index_add(0, dst, torch.ones(dst.numel())).clamp(min=1)
        return out / count.unsqueeze(-1)


def reset(nn):
    if hasattr(nn, 'reset_parameters'):
        nn.reset_parameters()


# ---- torch_geometric/nn/conv/film_conv.py ----
class FiLMConv(MessagePassing):
    def __init__(self, in_channels, out_channels, num_relations=1, nn=None, act=ReLU(), aggr='mean', **kwargs):
        super().__init__(aggr=aggr, **kwargs)

        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_relations = max(num_relations, 1)
        self.act = act

        if isinstance(in_channels, int):
            in_channels = (in_channels, in_channels)

        self.lins = ModuleList()
        self.films = ModuleList()
        for _ in range(num_relations):
            self.lins.append(Linear(in_channels[0], out_channels, bias=False))
            if nn is None:
                film = Linear(in_channels[1], 2 * out_channels)
            else:
                film = copy.deepcopy(nn)
            self.films.append(film)

        self.lin_skip = Linear(in_channels[1], self.out_channels, bias=False)
        if nn is None:
            self.film_skip = Linear(in_channels[1], 2 * self.out_channels, bias=False)
        else:
            self.film_skip = copy.deepcopy(nn)

        self.reset_parameters()

    def reset_parameters(self):
        for lin, film in zip(self.lins, self.films):
            lin.reset_parameters()
            reset(film)
        self.lin_skip.reset_parameters()
        reset(self.film_skip)

    def forward(self, x, edge_index, edge_type=None):
        if isinstance(x, Tensor):
            x = (x, x)

        beta, gamma = self.film_skip(x[1]).split(self.out_channels, dim=-1)
        out = gamma * self.lin_skip(x[1]) + beta
        if self.act is not None:
            out = self.act(out)

        if self.num_relations <= 1:
            beta, gamma = self.films[0](x[1]).split(self.out_channels, dim=-1)
            out = out + self.propagate(edge_index, x=self.lins[0](x[0]), beta=beta, gamma=gamma, size=None)
        else:
            for i, (lin, film) in enumerate(zip(self.lins, self.films)):
                beta, gamma = film(x[1]).split(self.out_channels, dim=-1)
                assert edge_type is not None
                mask = edge_type == i
                out = out + self.propagate(edge_index[:, mask], x=lin(x[0]), beta=beta, gamma=gamma, size=None)

        return out

    def message(self, x_j, beta_i, gamma_i):
        out = gamma_i * x_j + beta_i
        if self.act is not None:
            out = self.act(out)
        return out


# ---- stand-ins: PPI graphs and the DataLoader (two graphs per batch already merged) ----
class Batch:
    def __init__(self, num_nodes, num_features, num_classes):
        self.x = torch.randn(num_nodes, num_features)
        self.edge_index = torch.randint(0, num_nodes, (2, 4 * num_nodes))
        self.y = torch.randint(0, 2, (num_nodes, num_classes)).float()
        self.num_graphs = 2

    def to(self, device):
        return self


num_features, num_classes = 10, 6
train_loader = [Batch(20, num_features, num_classes) for _ in range(3)]
val_loader = [Batch(20, num_features, num_classes) for _ in range(1)]


def f1_score(y, pred, average='micro'):
    tp = (y * pred).sum()
    return 2 * tp / max(y.sum() + pred.sum(), 1)


# ---- examples/film.py ----
class Net(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, num_layers, dropout=0.0):
        super().__init__()
        self.dropout = dropout

        self.convs = torch.nn.ModuleList()
        self.convs.append(FiLMConv(in_channels, hidden_channels))
        for _ in range(num_layers - 2):
            self.convs.append(FiLMConv(hidden_channels, hidden_channels))
        self.convs.append(FiLMConv(hidden_channels, out_channels, act=None))

        self.norms = torch.nn.ModuleList()
        for _ in range(num_layers - 1):
            self.norms.append(BatchNorm1d(hidden_channels))

    def forward(self, x, edge_index):
        for conv, norm in zip(self.convs[:-1], self.norms):
            x = norm(conv(x, edge_index))
            x = F.dropout(x, p=self.dropout, training=self.training)
        x = self.convs[-1](x, edge_index)
        return x


device = torch.device('cpu')
model = Net(in_channels=num_features, hidden_channels=16, out_channels=num_classes, num_layers=4,
            dropout=0.1).to(device)
criterion = torch.nn.BCEWithLogitsLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)


def train():
    model.train()

    total_loss = 0
    for data in train_loader:
        data = data.to(device)
        optimizer.zero_grad()
        loss = criterion(model(data.x, data.edge_index), data.y)
        total_loss += loss.item() * data.num_graphs
        loss.backward()
        optimizer.step()
    return total_loss / (2 * len(train_loader))


@torch.no_grad()
def test(loader):
    model.eval()

    ys, preds = [], []
    for data in loader:
        ys.append(data.y)
        out = model(data.x.to(device), data.edge_index.to(device))
        preds.append((out > 0).float().cpu())

    y, pred = torch.cat(ys, dim=0).numpy(), torch.cat(preds, dim=0).numpy()
    return f1_score(y, pred, average='micro') if pred.sum() > 0 else 0


for epoch in range(1, 3):
    loss = train()
    val_f1 = test(val_loader)
    print(f'Epoch: {epoch:02d}, Loss: {loss:.4f}, Val: {val_f1:.4f}')
