# Source: https://github.com/toinsson/pysdtw/issues/2
"""Fixed twin of q_pysdtw_input_grad_after_to_device_bug.py: X is created on the device, in the
wanted dtype, with requires_grad=True, so it is the leaf and X.grad is filled by backward (the right
fix: build the leaf on the device instead of moving it after requires_grad).
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
X = torch.rand((4, 5, 3), device=device, dtype=dtype, requires_grad=True)
Y = torch.rand((4, 6, 3)).to(device, dtype)

# create the SoftDTW distance function
sdtw = SoftDTW(gamma=1.0, dist_func=distance.pairwise_l2_squared, use_cuda=False)

# soft-DTW discrepancy, approaches DTW as gamma -> 0
res = sdtw(X, Y)

# define a loss, which gradient can be backpropagated
loss = res.sum()
loss.backward()

# X.grad now contains the gradient with respect to the loss
print(X.grad)
