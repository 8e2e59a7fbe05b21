# Source: https://github.com/Maghoumi/pytorch-softdtw-cuda/issues/25
"""pytorch-softdtw-cuda's README example on the GPU, fixed (the stored thread gives no fix): x is
created on the device with requires_grad=True, so it is the leaf that backward fills, and x.grad
holds the soft-DTW gradient. The SoftDTW module is the same small torch stand-in as in the report's
program."""
import torch


class SoftDTW(torch.nn.Module):
    def __init__(self, use_cuda, gamma=1.0, normalize=False, bandwidth=None, dist_func=None):
        super(SoftDTW, self).__init__()
        self.normalize = normalize
        self.gamma = gamma
        self.bandwidth = 0 if bandwidth is None else float(bandwidth)
        self.use_cuda = use_cuda
        self.dist_func = dist_func if dist_func is not None else SoftDTW._euclidean_dist_func

    @staticmethod
    def _euclidean_dist_func(x, y):
        n = x.size(1)
        m = y.size(1)
        d = x.size(2)
        x = x.unsqueeze(2).expand(-1, n, m, d)
        y = y.unsqueeze(1).expand(-1, n, m, d)
        return torch.pow(x - y, 2).sum(3)

    def _soft_dtw(self, D):
        B, N, M = D.shape
        inf = torch.full((B,), float("inf"), dtype=D.dtype)
        R = [[inf] * (M + 1) for _ in range(N + 1)]
        R[0][0] = torch.zeros(B, dtype=D.dtype)
        for i in range(1, N + 1):
            for j in range(1, M + 1):
                prev = torch.stack([R[i - 1][j - 1], R[i - 1][j], R[i][j - 1]], dim=1)
                softmin = -self.gamma * torch.logsumexp(-prev / self.gamma, dim=1)
                R[i][j] = D[:, i - 1, j - 1] + softmin
        return R[N][M]

    def forward(self, X, Y):
        if self.normalize:
            x = torch.cat([X, X, Y])
            y = torch.cat([Y, X, Y])
            out = self._soft_dtw(self.dist_func(x, y))
            out_xy, out_xx, out_yy = torch.split(out, X.shape[0])
            return out_xy - 1 / 2 * (out_xx + out_yy)
        return self._soft_dtw(self.dist_func(X, Y))


device = torch.device("cpu")  # "cuda" in the report
# Create the sequences
batch_size, len_x, len_y, dims = 4, 6, 5, 3
x = torch.rand((batch_size, len_x, dims), device=device, requires_grad=True)
y = torch.rand((batch_size, len_y, dims), device=device)

# Create the "criterion" object
sdtw = SoftDTW(use_cuda=True, gamma=0.1)

# Compute the loss value
loss = sdtw(x, y)  # Just like any torch.nn.xyzLoss()

# Aggregate and call backward()
loss.mean().backward()
print(x.grad)
