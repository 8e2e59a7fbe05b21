# Source: https://github.com/pytorch/pytorch/issues/165621
"""The reporter's "Feedback about RNN": the nn.RNN docstring's "efficient implementation
equivalent" (as then documented, with the h_t[layer - 1] input fix and the .clone() calls), run
with a loss and backward. The hidden states live in a preallocated tensor h_t filled layer by
layer, `h_t[layer] = torch.tanh(input_t @ W_ih.T + ...)`; layer 1 reads `h_t[layer - 1]`, a view
the matmul saves, and the next write into h_t bumps the version of the whole buffer, so backward
raises "one of the variables needed for gradient computation has been modified by an inplace
operation" ("The example code doesn't work with backward"). The reporter's script, with the loss
they set up (MSE against a ones target) backwarded."""
import torch
import torch.nn as nn

# Efficient implementation equivalent to the following with bidirectional=False
rnn = nn.RNN(10, 20, 2)
params = dict(rnn.named_parameters())


def forward(x, hx=None, batch_first=False):
    if batch_first:
        x = x.transpose(0, 1)
    seq_len, batch_size, _ = x.size()
    if hx is None:
        hx = torch.zeros(rnn.num_layers, batch_size, rnn.hidden_size)
    h_t_minus_1 = hx.clone()
    h_t = hx.clone()
    output = []
    for t in range(seq_len):
        for layer in range(rnn.num_layers):
            input_t = x[t] if layer == 0 else h_t[layer - 1]
            h_t[layer] = torch.tanh(
                input_t @ params[f"weight_ih_l{layer}"].T
                + h_t_minus_1[layer] @ params[f"weight_hh_l{layer}"].T
                + params[f"bias_hh_l{layer}"]
                + params[f"bias_ih_l{layer}"]
            )
        output.append(h_t[-1].clone())
        h_t_minus_1 = h_t.clone()
    output = torch.stack(output)
    if batch_first:
        output = output.transpose(0, 1)
    return output, h_t


input = torch.randn(5, 3, 10)
h0 = torch.randn(2, 3, 20)
output, hn = forward(input, h0)

target = torch.ones_like(output)
loss = nn.MSELoss()(output, target)
loss.backward()  # expect: GG103
print({name: p.grad.norm().item() for name, p in params.items()})
