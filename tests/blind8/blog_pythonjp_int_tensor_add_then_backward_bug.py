# Source: https://python-jp.dev/articles/354576207
"""The python-jp.dev article on "RuntimeError: one of the variables needed for gradient
computation has been modified by an inplace operation". Its example of an in-place operation
causing the error: `x = torch.tensor([1, 2, 3])`, `x.add_(1)`, `y = x * 2`, `y.backward()`, with
the traceback it shows ("[torch.FloatTensor [3]], which is output 0 of AddBackward, is at version
2; expected version 1 instead"). torch 2.13 does not raise that: x is an integer tensor that does
not require grad, so y has no grad_fn and `y.backward()` raises "element 0 of tensors does not
require grad and does not have a grad_fn". The article's program, as written there."""
import torch

x = torch.tensor([1, 2, 3])

# in-place operation
x.add_(1)

y = x * 2

# gradient computation
y.backward()  # expect: GG104
