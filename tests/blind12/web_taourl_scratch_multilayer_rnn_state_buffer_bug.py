# Source: https://taourl.com/read-2588097.html
"""A multilayer RNN written from scratch (the article's "input dilemma" of feeding layer l-1's
hidden state to layer l, and its "in-place replacement error during backpropagation"): the user
keeps the hidden states of all layers in one preallocated tensor H and, per time step, overwrites
H[l] with the new state computed from H[l-1] and the old H[l]. The matmuls saved views of H, so the
loss's backward raises "one of the variables needed for gradient computation has been modified by
an inplace operation". Fix from the article: no slice assignment into a tensor of the graph; the
states are kept in a Python list and each step builds new tensors.
"""
import torch
import torch.nn as nn


class ScratchRNN(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, output_size):
        super().__init__()
        self.hidden_size, self.num_layers = hidden_size, num_layers
        sizes = [input_size] + [hidden_size] * (num_layers - 1)
        self.W_x = nn.ParameterList([nn.Parameter(torch.randn(s, hidden_size) * 0.1) for s in sizes])
        self.W_h = nn.ParameterList([nn.Parameter(torch.randn(hidden_size, hidden_size) * 0.1) for _ in sizes])
        self.b = nn.ParameterList([nn.Parameter(torch.zeros(hidden_size)) for _ in sizes])
        self.fc = nn.Linear(hidden_size, output_size)

    def cell(self, layer, inp, h_prev):
        return torch.tanh(inp @ self.W_x[layer] + h_prev @ self.W_h[layer] + self.b[layer])

    def forward(self, x):
        batch, seq_len, _ = x.shape
        H = torch.zeros(self.num_layers, batch, self.hidden_size)
        for t in range(seq_len):
            inp = x[:, t, :]
            for layer in range(self.num_layers):
                H[layer] = self.cell(layer, inp, H[layer])
                inp = H[layer]
        return self.fc(H[-1])


def train(model, data, epochs=2):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()
    for epoch in range(epochs):
        for x, y in data:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()  # expect: GG103
            opt.step()
        print(epoch, loss.item())


data = [(torch.randn(4, 5, 3), torch.randn(4, 2)) for _ in range(3)]
train(ScratchRNN(3, 8, 2, 2), data)
