# Source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/57
"""A traffic model of two stacked STConv blocks from torch_geometric_temporal (release of spring
2021): STConv.forward applies the ChebConv to each `T[b][t]` of the temporal convolution's output
and writes the result back into the same tensor (`T[b][t] = self._graph_conv(T[b][t], ...)`), so
each write bumps the version of the slices that the ChebConv's linear layers saved: "one of the
variables needed for gradient computation has been modified by an inplace operation" (output 0 of
SelectBackward) at loss.backward(). The fix (current release) writes into a fresh
`torch.zeros_like(T_0)`. torch_geometric's ChebConv is a small dense stand-in written here.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ChebConv(nn.Module):
    """Stand-in for torch_geometric.nn.ChebConv (dense scaled Laplacian, lambda_max = 2)."""
    def __init__(self, in_channels, out_channels, K, normalization="sym", bias=True):
        super(ChebConv, self).__init__()
        self.lins = nn.ModuleList([nn.Linear(in_channels, out_channels, bias=False) for _ in range(K)])
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias else None
        self.normalization = normalization

    def __norm__(self, edge_index, num_nodes, edge_weight):
        if edge_weight is None:
            edge_weight = torch.ones(edge_index.size(1))
        A = torch.zeros(num_nodes, num_nodes)
        A[edge_index[0], edge_index[1]] = edge_weight
        deg = A.sum(1).clamp(min=1)
        d = deg.pow(-0.5)
        L = torch.eye(num_nodes) - d[:, None] * A * d[None, :]
        return L - torch.eye(num_nodes)

    def forward(self, x, edge_index, edge_weight=None):
        L_hat = self.__norm__(edge_index, x.size(0), edge_weight)
        Tx_0 = x
        out = self.lins[0](Tx_0)
        if len(self.lins) > 1:
            Tx_1 = L_hat @ x
            out = out + self.lins[1](Tx_1)
            for lin in self.lins[2:]:
                Tx_2 = 2. * (L_hat @ Tx_1) - Tx_0
                out = out + lin(Tx_2)
                Tx_0, Tx_1 = Tx_1, Tx_2
        if self.bias is not None:
            out = out + self.bias
        return out


class TemporalConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3):
        super(TemporalConv, self).__init__()
        self.conv_1 = nn.Conv2d(in_channels, out_channels, (1, kernel_size))
        self.conv_2 = nn.Conv2d(in_channels, out_channels, (1, kernel_size))
        self.conv_3 = nn.Conv2d(in_channels, out_channels, (1, kernel_size))

    def forward(self, X):
        X = X.permute(0, 3, 2, 1)
        P = self.conv_1(X)
        Q = torch.sigmoid(self.conv_2(X))
        PQ = P + Q
        H = F.relu(PQ + self.conv_3(X))
        H = H.permute(0, 3, 2, 1)
        return H


class STConv(nn.Module):
    def __init__(self, num_nodes, in_channels, hidden_channels, out_channels, kernel_size, K,
                 normalization="sym", bias=True):
        super(STConv, self).__init__()
        self._temporal_conv1 = TemporalConv(in_channels=in_channels, out_channels=hidden_channels,
                                            kernel_size=kernel_size)
        self._graph_conv = ChebConv(in_channels=hidden_channels, out_channels=hidden_channels, K=K,
                                    normalization=normalization, bias=bias)
        self._temporal_conv2 = TemporalConv(in_channels=hidden_channels, out_channels=out_channels,
                                            kernel_size=kernel_size)
        self._batch_norm = nn.BatchNorm2d(num_nodes)

    def forward(self, X, edge_index, edge_weight=None):
        T = self._temporal_conv1(X)
        for b in range(T.size(0)):
            for t in range(T.size(1)):
                T[b][t] = self._graph_conv(T[b][t], edge_index, edge_weight)
        T = F.relu(T)
        T = self._temporal_conv2(T)
        T = T.permute(0, 2, 1, 3)
        T = self._batch_norm(T)
        T = T.permute(0, 2, 1, 3)
        return T


class STGCN(nn.Module):
    def __init__(self, num_nodes, in_channels, time_steps, horizon):
        super(STGCN, self).__init__()
        self.recurrent1 = STConv(num_nodes, in_channels, 8, 8, kernel_size=2, K=2)
        self.recurrent2 = STConv(num_nodes, 8, 8, 4, kernel_size=2, K=2)
        self.linear = nn.Linear((time_steps - 4) * 4, horizon)

    def forward(self, x, edge_indices, edge_weights):
        h1 = self.recurrent1(x, edge_indices, edge_weights)
        h2 = self.recurrent2(h1, edge_indices, edge_weights)
        h = h2.permute(0, 2, 1, 3).flatten(2)
        return self.linear(h)


num_nodes, time_steps, horizon = 5, 8, 2
edge_indices = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 4], [1, 0, 2, 1, 3, 2, 4, 3]])
edge_weights = torch.rand(edge_indices.size(1))
model = STGCN(num_nodes, 1, time_steps, horizon)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.MSELoss()

for epoch in range(2):
    x = torch.randn(2, time_steps, num_nodes, 1)
    y = torch.randn(2, num_nodes, horizon)
    optimizer.zero_grad()
    out = model(x, edge_indices, edge_weights)
    loss = criterion(out, y)
    loss.backward()  # expect: GG103
    optimizer.step()
