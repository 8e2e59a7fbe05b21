# Source: https://discuss.pytorch.org/t/loss-grad-is-constant-1/130964
"""The thread's answer (@ptrblck, and the poster's case 3): a non-leaf keeps its .grad only if
`loss.retain_grad()` was called before the backward; .grad is then None until loss.backward()
sets it to 1 (d loss / d loss). Both cases call loss.retain_grad() right after computing loss."""
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
loss.retain_grad()
print(loss.grad)  # None
print(x.grad)  # None
loss.backward()
print(loss.grad)  # tensor([[1.]])
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
loss.retain_grad()
print(loss.grad)  # None
loss.backward()
print(loss.grad)  # tensor([[1.]])
print(y.grad)  # d(loss)/dy
