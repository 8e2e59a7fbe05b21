# Source: https://github.com/pytorch/pytorch/issues/53348
"""The reporter's "matrix product written as loops" (to get ma's gradient through an element-wise
implementation): the result buffer is preallocated with `torch.zeros(..., requires_grad=True)` and
filled element by element, `res_torch[b][c][h][k] = res_torch[b][c][h][k] + ma[...] * mb[...]`.
The buffer is a leaf that requires grad, so the first element assignment writes in place into a
view of it and torch 2.13 raises "a view of a leaf Variable that requires grad is being used in an
in-place operation" (the report quotes PyTorch 1.7's "leaf variable has been moved into the graph
interior"). The reporter's code with the batch and channel sizes kept and a comparison with the
matmul gradient after the loop."""
import torch

ma = torch.randn(2, 3, 3, 4).requires_grad_(True)
mb = torch.randn(2, 3, 4, 5).requires_grad_(True)
B, C, H, W = ma.shape
B, C, W, K = mb.shape
res_torch = torch.zeros((B, C, H, K), requires_grad=True)
for b in range(B):
    for c in range(C):
        for h in range(H):
            for k in range(K):
                for r in range(W):
                    res_torch[b][c][h][k] = res_torch[b][c][h][k] + ma[b][c][h][r] * mb[b][c][r][k]  # expect: GG108
res_torch.sum().backward()
print(ma.grad)

expected = torch.autograd.grad((ma @ mb).sum(), ma)[0]
print(torch.allclose(ma.grad, expected))
