# Source: https://blog.youkuaiyun.com/fengyu7789/article/details/123215466
"""Gradient of a weight tensor after creating it on the device (fixed).

The buggy version wrote ``w = torch.rand(3, 1, requires_grad=True).to(device)``:
the move returns a new non-leaf tensor, so ``w.grad`` is ``None`` (with a
warning) after ``backward``.

Fix, as the post concludes: create the tensor directly on the target device /
dtype, ``torch.rand(3, 1, requires_grad=True, device=device)``, so ``w`` itself is
the leaf that receives the gradient.  (CPU-only stand-in: the device move is
played by a float64 move, so the target is given with ``dtype=``.)
"""
import torch

# device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
device = torch.float64  # stand-in for the CUDA device (see docstring)

torch.manual_seed(123)
x = torch.rand(10, 3).to(device)
w = torch.rand(3, 1, requires_grad=True, dtype=device)
t = (x @ w).sum()
t.backward()
print(w.grad)
