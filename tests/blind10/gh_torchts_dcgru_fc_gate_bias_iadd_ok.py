# Source: https://github.com/Rose-STL-Lab/torchTS/pull/59
"""torchTS's DCGRUCell with the PR's fix: the fully-connected gate _fc returns
torch.matmul(inputs_and_state, W) + b, out of place and without its own sigmoid; forward applies
the one sigmoid, whose saved output nothing modifies."""
import numpy as np
import torch
from torch import nn


def scaled_laplacian(adj_mx):
    d = np.array(adj_mx.sum(1)).flatten()
    d_inv_sqrt = np.power(d, -0.5, where=d > 0)
    lap = np.eye(adj_mx.shape[0]) - d_inv_sqrt[:, None] * adj_mx * d_inv_sqrt[None, :]
    return lap - np.eye(adj_mx.shape[0])


def sparse_matrix(m):
    return torch.tensor(m, dtype=torch.float32).to_sparse()


def concat(x, x_):
    return torch.cat([x, x_.unsqueeze(0)], dim=0)


class DCGRUCell(nn.Module):
    def __init__(self, num_units, adj_mx, max_diffusion_step, num_nodes, input_dim,
                 activation=torch.tanh, use_gc_for_ru=True):
        super().__init__()
        self._activation = activation
        self._num_nodes = num_nodes
        self._num_units = num_units
        self._max_diffusion_step = max_diffusion_step
        self._use_gc_for_ru = use_gc_for_ru

        supports = [sparse_matrix(scaled_laplacian(adj_mx))]
        self._supports = supports

        num_matrices = len(supports) * self._max_diffusion_step + 1
        input_size_gconv = (self._num_units + input_dim) * num_matrices
        input_size_ru = input_size_gconv if use_gc_for_ru else self._num_units + input_dim

        output_size = 2 * self._num_units
        self._ru_weights = nn.Parameter(torch.empty(input_size_ru, output_size))
        self._ru_biases = nn.Parameter(torch.empty(output_size))
        nn.init.xavier_normal_(self._ru_weights, gain=1.0)
        nn.init.constant_(self._ru_biases, val=1.0)

        output_size = self._num_units
        self._gconv_weights = nn.Parameter(torch.empty(input_size_gconv, output_size))
        self._gconv_biases = nn.Parameter(torch.empty(output_size))
        nn.init.xavier_normal_(self._gconv_weights, gain=1.0)
        nn.init.constant_(self._gconv_biases, val=0.0)

    def forward(self, inputs, hx):
        fn = self._gconv if self._use_gc_for_ru else self._fc
        output_size = 2 * self._num_units
        value = torch.sigmoid(fn(inputs, hx, output_size, bias_start=1.0, reset=True))
        value = torch.reshape(value, (-1, self._num_nodes, output_size))
        r, u = torch.split(tensor=value, split_size_or_sections=self._num_units, dim=-1)
        r = torch.reshape(r, (-1, self._num_nodes * self._num_units))
        u = torch.reshape(u, (-1, self._num_nodes * self._num_units))
        c = self._gconv(inputs, r * hx, self._num_units)

        if self._activation is not None:
            c = self._activation(c)

        return u * hx + (1.0 - u) * c

    def _fc(self, inputs, state, output_size, bias_start=0.0, reset=True):
        batch_size = inputs.shape[0]
        shape = (batch_size * self._num_nodes, -1)
        inputs = torch.reshape(inputs, shape)
        state = torch.reshape(state, shape)
        inputs_and_state = torch.cat([inputs, state], dim=-1)
        return torch.matmul(inputs_and_state, self._ru_weights) + self._ru_biases

    def _gconv(self, inputs, state, output_size, bias_start=0.0, reset=False):
        batch_size = inputs.shape[0]
        shape = (batch_size, self._num_nodes, -1)
        inputs = torch.reshape(inputs, shape)
        state = torch.reshape(state, shape)
        x = torch.cat([inputs, state], dim=2)
        input_size = x.size(2)

        x0 = x.permute(1, 2, 0)
        x0 = torch.reshape(x0, shape=[self._num_nodes, input_size * batch_size])
        x = torch.unsqueeze(x0, 0)

        if self._max_diffusion_step > 0:
            for support in self._supports:
                x1 = torch.sparse.mm(support, x0)
                x = concat(x, x1)
                for _ in range(2, self._max_diffusion_step + 1):
                    x2 = 2 * torch.sparse.mm(support, x1) - x0
                    x = concat(x, x2)
                    x1, x0 = x2, x1

        num_matrices = len(self._supports) * self._max_diffusion_step + 1
        x = torch.reshape(x, shape=[num_matrices, self._num_nodes, input_size, batch_size])
        x = x.permute(3, 1, 2, 0)
        x = torch.reshape(x, shape=[batch_size * self._num_nodes, input_size * num_matrices])

        if reset:
            weights, biases = self._ru_weights, self._ru_biases
        else:
            weights, biases = self._gconv_weights, self._gconv_biases

        x = torch.matmul(x, weights) + biases
        return torch.reshape(x, [batch_size, self._num_nodes * output_size])


class DCGRU(nn.Module):
    def __init__(self, num_layers, num_units, adj_mx, max_diffusion_step, num_nodes, input_dim,
                 use_gc_for_ru=True):
        super().__init__()
        self.layers = nn.ModuleList(
            DCGRUCell(num_units, adj_mx, max_diffusion_step, num_nodes,
                      input_dim if i == 0 else num_units, use_gc_for_ru=use_gc_for_ru)
            for i in range(num_layers)
        )

    def forward(self, inputs, hidden_state):
        hidden_states = []
        output = inputs
        for i, layer in enumerate(self.layers):
            output = layer(output, hidden_state[i])
            hidden_states.append(output)
        return output, torch.stack(hidden_states)


class DCRNN(nn.Module):
    def __init__(self, adj_mx, num_nodes, num_units=8, input_dim=2, output_dim=1, seq_len=4,
                 num_layers=2, max_diffusion_step=2, use_gc_for_ru=True):
        super().__init__()
        self.num_nodes, self.num_units, self.num_layers = num_nodes, num_units, num_layers
        self.seq_len, self.output_dim = seq_len, output_dim
        self.encoder = DCGRU(num_layers, num_units, adj_mx, max_diffusion_step, num_nodes, input_dim,
                             use_gc_for_ru=use_gc_for_ru)
        self.projection = nn.Linear(num_units, output_dim)

    def forward(self, inputs):
        batch_size = inputs.shape[1]
        hidden = torch.zeros(self.num_layers, batch_size, self.num_nodes * self.num_units)
        for t in range(self.seq_len):
            output, hidden = self.encoder(inputs[t], hidden)
        return self.projection(output.view(-1, self.num_units)).view(batch_size, -1)


if __name__ == "__main__":
    num_nodes = 5
    adj_mx = (np.random.rand(num_nodes, num_nodes) > 0.5).astype(np.float64) + np.eye(num_nodes)
    model = DCRNN(adj_mx, num_nodes, use_gc_for_ru=False)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    criterion = nn.L1Loss()
    for step in range(2):
        x = torch.randn(4, 3, num_nodes * 2)
        y = torch.randn(3, num_nodes)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
