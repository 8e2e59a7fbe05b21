# Source: https://discuss.pytorch.org/t/loss-grad-is-constant-1/130964
"""The forum thread "Loss.grad is constant 1?": the poster's "mini-tutorial in code" on which
tensors keep a .grad. It prints `loss.grad` before and after `loss.backward()` for a
`loss = out**2` computed from an nn.Linear; loss is not a leaf, so each read returns None and torch
warns that the .grad attribute of a non-leaf Tensor is being accessed (the program runs on). The
poster's cases 1 and 2, as a script."""
import torch
from torch import nn

model = nn.Linear(1, 1)
print("#" * 7)
print("Case 1")
print("#" * 7)
# This is a leaf, but has no grad attribute
x = torch.randn(1, 1)
print(x.is_leaf)  # True
print(x.grad)  # None
out = model(x)
loss = out**2
print(loss.grad)  # None  # expect: GG106
print(x.grad)  # None
loss.backward()
print(loss.grad)  # None  # expect: GG106
print(x.grad)  # None

print("*" * 7)
print("Case 2")
print("*" * 7)
# This is a leaf, and has a grad attribute because we told so.
y = torch.randn(1, 1, requires_grad=True)
print(y.is_leaf)  # True
print(y.grad)  # None
out = model(y)
loss = out**2
print(loss.grad)  # None  # expect: GG106
loss.backward()
print(loss.grad)  # None  # expect: GG106
print(y.grad)  # d(loss)/dy
