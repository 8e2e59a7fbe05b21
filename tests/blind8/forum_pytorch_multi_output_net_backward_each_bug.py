# Source: https://discuss.pytorch.org/t/how-to-do-backward-for-a-net-with-multiple-outputs/87
"""The forum thread "How to do backward() for a net with multiple outputs?": coming from Torch7,
where a net ending in an `nn.ConcatTable` is trained with `net:backward(inputs, gradOutputs)` and
a table of gradient tensors, the poster "tried to backward() for each output, but it complained
that backward should not be called multiple times". A multi-task net whose shared trunk feeds two
heads (the ConcatTable), each head's gradOutput computed as in Torch7 from its criterion's
derivative, and one `backward(gradOutput)` per output: the second walks the trunk's freed graph."""
import torch
import torch.nn as nn


class TwoHeadNet(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(n_in, n_hidden), nn.Tanh())
        self.head_a = nn.Linear(n_hidden, 3)
        self.head_b = nn.Linear(n_hidden, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.head_a(h), self.head_b(h)   # the ConcatTable


def mse_grad(output, target):
    """d/d(output) of the mean squared error, the gradOutput Torch7's criterion:backward gives."""
    return 2 * (output.detach() - target) / output.numel()


net = TwoHeadNet(n_in=10, n_hidden=20)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)

for it in range(3):
    inputs = torch.randn(16, 10)
    target_a, target_b = torch.randn(16, 3), torch.randn(16, 1)
    out_a, out_b = net(inputs)
    optimizer.zero_grad()
    out_a.backward(mse_grad(out_a, target_a))
    out_b.backward(mse_grad(out_b, target_b))  # expect: GG101
    optimizer.step()
    print(it, ((out_a - target_a) ** 2).mean().item(), ((out_b - target_b) ** 2).mean().item())
