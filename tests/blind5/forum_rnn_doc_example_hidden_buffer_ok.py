# Source: https://github.com/pytorch/pytorch/issues/165621
"""The docs fix the issue led to (pytorch/pytorch PRs 173888 and 184817): each time step builds a
fresh Python list of layer states, `h_t.append(torch.tanh(...))`, stacked at the end, so no
tensor a matmul saved is ever written in place. Same RNN parameters, input and loss."""
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
    h_t_minus_1 = hx
    output = []
    for t in range(seq_len):
        h_t = []
        for layer in range(rnn.num_layers):
            input_t = x[t] if layer == 0 else h_t[layer - 1]
            h_t.append(torch.tanh(
                input_t @ params[f"weight_ih_l{layer}"].T
                + h_t_minus_1[layer] @ params[f"weight_hh_l{layer}"].T
                + params[f"bias_hh_l{layer}"]
                + params[f"bias_ih_l{layer}"]
            ))
        output.append(h_t[-1])
        h_t_minus_1 = h_t
    output = torch.stack(output)
    h_t = torch.stack(h_t)
    if batch_first:
        output = output.transpose(0, 1)
    return output, h_t


input = torch.randn(5, 3, 10)
h0 = torch.randn(2, 3, 20)
output, hn = forward(input, h0)

target = torch.ones_like(output)
loss = nn.MSELoss()(output, target)
loss.backward()
print({name: p.grad.norm().item() for name, p in params.items()})
