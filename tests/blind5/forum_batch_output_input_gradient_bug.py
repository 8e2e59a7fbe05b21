# Source: https://discuss.pytorch.org/t/the-output-gradient-w-r-t-the-input/21098
"""The forum question "The output gradient w.r.t the input": the poster wants, for a batch, the
gradient of each sample's network output with respect to that sample's input, and calls
.backward() on the output, one value per input in the batch, which raises "grad can be implicitly
created only for scalar outputs". The thread has the question text only; the program reconstructs
it: an MLP regressor, a batch of inputs that require grad, `out = net(x).squeeze(1)`,
`out.backward()`, then the per-sample gradients read from x.grad."""
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
out.backward()  # expect: GG105
input_grads = x.grad  # row i: d out_i / d x_i
print(input_grads.shape)
