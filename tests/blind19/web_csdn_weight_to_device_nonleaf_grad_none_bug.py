# Source: https://blog.youkuaiyun.com/fengyu7789/article/details/123215466
"""Gradient of a weight tensor is always None after ``.to(device)`` (CSDN post).

The author creates the weight with ``requires_grad=True`` and then moves it to
the GPU in the same expression, ``w = torch.rand(3, 1, requires_grad=True).to(device)``.
The move returns a *new* tensor produced by a copy op, so the name ``w`` is bound
to a non-leaf; the real leaf is the unnamed CPU tensor.  After ``t.backward()``
reading ``w.grad`` hits a non-leaf ``.grad``: torch warns and returns ``None``
(the author's "梯度始终为None"; in a training module the parameter never updates).

CPU-only stand-in: the reporter runs with ``device = torch.device('cuda')``.  Here a
move to float64 plays the part of the device move: exactly like ``.to('cuda')`` it
returns a new non-leaf tensor, while the statements keep the reporter's shape.

Fix (the post's final answer): create the tensor directly where it lives,
``torch.rand(3, 1, requires_grad=True, device=device)``, so ``w`` is the leaf.
"""
import torch

# device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
device = torch.float64  # stand-in for the CUDA move (see docstring)

torch.manual_seed(123)
x = torch.rand(10, 3).to(device)
w = torch.rand(3, 1, requires_grad=True).to(device)
t = (x @ w).sum()
t.backward()
print(w.grad)  # expect: GG106

# return: None
