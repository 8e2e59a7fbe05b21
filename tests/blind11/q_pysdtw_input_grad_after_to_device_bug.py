# Source: https://github.com/toinsson/pysdtw/issues/2
"""The user runs pysdtw's README example on the GPU: `X = torch.rand(..., requires_grad=True).to(device)`,
soft-DTW between X and Y, `loss.backward()`, then reads `X.grad`: it is None and torch warns "The
.grad attribute of a Tensor that is not a leaf Tensor is being accessed", because `.to(device)`
returns a new, non-leaf tensor. Fix: create X on the device as the leaf (device=..., requires_grad=True).
This runs on CPU, where `.to("cpu")` would be a no-op: the move is a conversion to float64 here
(like the move to CUDA, it returns a new tensor). pysdtw's CUDA kernel is a small torch stand-in.
"""
import torch


class distance:
    @staticmethod
    def pairwise_l2_squared(x, y):
        x_norm = (x ** 2).sum(-1).unsqueeze(-1)
        y_norm = (y ** 2).sum(-1).unsqueeze(-2)
        return (x_norm + y_norm - 2.0 * x @ y.transpose(-1, -2)).clamp(min=0)


class SoftDTW(torch.nn.Module):
    def __init__(self, gamma=1.0, dist_func=distance.pairwise_l2_squared, use_cuda=False):
        super().__init__()
        self.gamma, self.dist_func, self.use_cuda = gamma, dist_func, use_cuda

    def softmin(self, a, b, c):
        stacked = torch.stack([a, b, c], dim=-1)
        return -self.gamma * torch.logsumexp(-stacked / self.gamma, dim=-1)

    def forward(self, X, Y):
        D = self.dist_func(X, Y)
        B, N, M = D.shape
        inf = torch.full((B,), float("inf"), dtype=D.dtype)
        R = [[inf] * (M + 1) for _ in range(N + 1)]
        R[0][0] = torch.zeros(B, dtype=D.dtype)
        for i in range(1, N + 1):
            for j in range(1, M + 1):
                R[i][j] = D[:, i - 1, j - 1] + self.softmin(R[i - 1][j - 1], R[i - 1][j], R[i][j - 1])
        return R[N][M]


device = torch.device("cpu")
dtype = torch.float64

# the input data includes a batch dimension
X = torch.rand((4, 5, 3), requires_grad=True).to(device, dtype)
Y = torch.rand((4, 6, 3)).to(device, dtype)

# create the SoftDTW distance function
sdtw = SoftDTW(gamma=1.0, dist_func=distance.pairwise_l2_squared, use_cuda=False)

# soft-DTW discrepancy, approaches DTW as gamma -> 0
res = sdtw(X, Y)

# define a loss, which gradient can be backpropagated
loss = res.sum()
loss.backward()

# X.grad now contains the gradient with respect to the loss
print(X.grad)  # expect: GG106
