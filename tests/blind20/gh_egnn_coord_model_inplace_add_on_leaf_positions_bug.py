# Source: https://github.com/vgsatorras/egnn/issues/3
"""EGNN (vgsatorras/egnn, models/egnn_clean/egnn_clean.py) used in another project.

The reporter ran into autograd errors from the in-place update in `E_GCL.coord_model`
(`coord += agg`) when using the clean EGNN in a different project.  A typical such project
is an energy/force model: the atom positions `x` are a leaf with `requires_grad=True` so that
forces can be taken as `-dE/dx`.  The first layer receives that leaf as `coord`, and
`coord += agg` writes into it in place, so torch raises "a leaf Variable that requires grad
is being used in an in-place operation" in the forward pass.

Fix (the one the maintainer committed after the thread): `coord = coord + agg`.
"""
import torch
from torch import nn

torch.manual_seed(0)


class E_GCL(nn.Module):
    """E(n) Equivariant Convolutional Layer"""

    def __init__(self, input_nf, output_nf, hidden_nf, edges_in_d=0, act_fn=nn.SiLU(), residual=True,
                 attention=False, normalize=False, coords_agg='mean', tanh=False):
        super(E_GCL, self).__init__()
        input_edge = input_nf * 2
        self.residual = residual
        self.attention = attention
        self.normalize = normalize
        self.coords_agg = coords_agg
        self.tanh = tanh
        self.epsilon = 1e-8
        edge_coords_nf = 1

        self.edge_mlp = nn.Sequential(
            nn.Linear(input_edge + edge_coords_nf + edges_in_d, hidden_nf),
            act_fn,
            nn.Linear(hidden_nf, hidden_nf),
            act_fn)

        self.node_mlp = nn.Sequential(
            nn.Linear(hidden_nf + input_nf, hidden_nf),
            act_fn,
            nn.Linear(hidden_nf, output_nf))

        layer = nn.Linear(hidden_nf, 1, bias=False)
        torch.nn.init.xavier_uniform_(layer.weight, gain=0.001)

        coord_mlp = [nn.Linear(hidden_nf, hidden_nf), act_fn, layer]
        if self.tanh:
            coord_mlp.append(nn.Tanh())
        self.coord_mlp = nn.Sequential(*coord_mlp)

    def edge_model(self, source, target, radial, edge_attr):
        if edge_attr is None:
            out = torch.cat([source, target, radial], dim=1)
        else:
            out = torch.cat([source, target, radial, edge_attr], dim=1)
        out = self.edge_mlp(out)
        return out

    def node_model(self, x, edge_index, edge_attr, node_attr):
        row, col = edge_index
        agg = unsorted_segment_sum(edge_attr, row, num_segments=x.size(0))
        agg = torch.cat([x, agg], dim=1)
        out = self.node_mlp(agg)
        if self.residual:
            out = x + out
        return out, agg

    def coord_model(self, coord, edge_index, coord_diff, edge_feat):
        row, col = edge_index
        trans = coord_diff * self.coord_mlp(edge_feat)
        if self.coords_agg == 'sum':
            agg = unsorted_segment_sum(trans, row, num_segments=coord.size(0))
        elif self.coords_agg == 'mean':
            agg = unsorted_segment_mean(trans, row, num_segments=coord.size(0))
        else:
            raise Exception('Wrong coords_agg parameter %s' % self.coords_agg)
        coord += agg  # expect: GG108
        return coord

    def coord2radial(self, edge_index, coord):
        row, col = edge_index
        coord_diff = coord[row] - coord[col]
        radial = torch.sum(coord_diff ** 2, 1).unsqueeze(1)
        return radial, coord_diff

    def forward(self, h, edge_index, coord, edge_attr=None, node_attr=None):
        row, col = edge_index
        radial, coord_diff = self.coord2radial(edge_index, coord)
        edge_feat = self.edge_model(h[row], h[col], radial, edge_attr)
        coord = self.coord_model(coord, edge_index, coord_diff, edge_feat)
        h, agg = self.node_model(h, edge_index, edge_feat, node_attr)
        return h, coord, edge_attr


class EGNN(nn.Module):
    def __init__(self, in_node_nf, hidden_nf, out_node_nf, in_edge_nf=0, act_fn=nn.SiLU(), n_layers=2):
        super(EGNN, self).__init__()
        self.hidden_nf = hidden_nf
        self.n_layers = n_layers
        self.embedding_in = nn.Linear(in_node_nf, self.hidden_nf)
        self.embedding_out = nn.Linear(self.hidden_nf, out_node_nf)
        for i in range(0, n_layers):
            self.add_module("gcl_%d" % i, E_GCL(self.hidden_nf, self.hidden_nf, self.hidden_nf,
                                                edges_in_d=in_edge_nf, act_fn=act_fn))

    def forward(self, h, x, edges, edge_attr):
        h = self.embedding_in(h)
        for i in range(0, self.n_layers):
            h, x, _ = self._modules["gcl_%d" % i](h, edges, x, edge_attr=edge_attr)
        h = self.embedding_out(h)
        return h, x


def unsorted_segment_sum(data, segment_ids, num_segments):
    result_shape = (num_segments, data.size(1))
    result = data.new_full(result_shape, 0)
    segment_ids = segment_ids.unsqueeze(-1).expand(-1, data.size(1))
    result.scatter_add_(0, segment_ids, data)
    return result


def unsorted_segment_mean(data, segment_ids, num_segments):
    result_shape = (num_segments, data.size(1))
    segment_ids = segment_ids.unsqueeze(-1).expand(-1, data.size(1))
    result = data.new_full(result_shape, 0)
    count = data.new_full(result_shape, 0)
    result.scatter_add_(0, segment_ids, data)
    count.scatter_add_(0, segment_ids, torch.ones_like(data))
    return result / count.clamp(min=1)


def get_edges_batch(n_nodes, batch_size):
    rows, cols = [], []
    for b in range(batch_size):
        for i in range(n_nodes):
            for j in range(n_nodes):
                if i != j:
                    rows.append(i + n_nodes * b)
                    cols.append(j + n_nodes * b)
    edges = [torch.LongTensor(rows), torch.LongTensor(cols)]
    edge_attr = torch.ones(len(rows), 1)
    return edges, edge_attr


def energy_and_forces(model, h, pos, edges, edge_attr, batch_size, n_nodes):
    pos = pos.clone().requires_grad_(True)  # positions are a leaf: forces = -dE/dpos
    h_out, _ = model(h, pos, edges, edge_attr)
    energy = h_out.view(batch_size, n_nodes).sum(1)
    forces = -torch.autograd.grad(energy.sum(), pos, create_graph=True)[0]
    return energy, forces


if __name__ == "__main__":
    batch_size, n_nodes, n_feat, x_dim = 4, 4, 1, 3
    edges, edge_attr = get_edges_batch(n_nodes, batch_size)
    model = EGNN(in_node_nf=n_feat, hidden_nf=16, out_node_nf=1, in_edge_nf=1)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    for epoch in range(2):
        for step in range(3):
            h = torch.ones(batch_size * n_nodes, n_feat)
            pos = torch.randn(batch_size * n_nodes, x_dim)
            e_true = torch.randn(batch_size)
            f_true = torch.randn(batch_size * n_nodes, x_dim)
            optimizer.zero_grad()
            energy, forces = energy_and_forces(model, h, pos, edges, edge_attr, batch_size, n_nodes)
            loss = (energy - e_true).pow(2).mean() + (forces - f_true).pow(2).mean()
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())
