# Source: https://github.com/pytorch/pytorch/issues/53348
"""The fix that fits the cause (the thread points to the forum): the buffer is a plain
`torch.zeros((B, C, H, K))` that does not require grad; each element assignment is then recorded
(CopySlices) and the gradient reaches ma and mb, equal to the matmul's. Same loops."""
import torch

ma = torch.randn(2, 3, 3, 4).requires_grad_(True)
mb = torch.randn(2, 3, 4, 5).requires_grad_(True)
B, C, H, W = ma.shape
B, C, W, K = mb.shape
res_torch = torch.zeros((B, C, H, K))
for b in range(B):
    for c in range(C):
        for h in range(H):
            for k in range(K):
                for r in range(W):
                    res_torch[b][c][h][k] = res_torch[b][c][h][k] + ma[b][c][h][r] * mb[b][c][r][k]
res_torch.sum().backward()
print(ma.grad)

expected = torch.autograd.grad((ma @ mb).sum(), ma)[0]
print(torch.allclose(ma.grad, expected))
