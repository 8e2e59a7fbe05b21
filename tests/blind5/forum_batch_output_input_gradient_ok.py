# Source: https://discuss.pytorch.org/t/the-output-gradient-w-r-t-the-input/21098
"""The thread's answer: pass the weights of the vector-Jacobian product, `out.backward(weight)`,
which is `(out * weight).sum().backward()`; with all-ones weights, and the samples independent of
each other (no batch-coupling layer), row i of x.grad is d out_i / d x_i. Same network and batch."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, d_in=6, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


net = Net()
x = torch.randn(8, 6, requires_grad=True)
out = net(x).squeeze(1)  # one output per input in the batch
out.backward(torch.ones_like(out))
input_grads = x.grad  # row i: d out_i / d x_i
print(input_grads.shape)
