# Source: https://discuss.pytorch.org/t/gradient-is-lost-when-use-torch-tensor-t1-t2/23261
"""The poster's code: two cosines of trainable angles are put into a vector with
torch.tensor([cosa, cosb]) for a following matrix product; torch.tensor copies the values into a
new leaf without history, so y2.sum().backward() fails."""
import torch

a = torch.tensor(0.0)
b = torch.tensor(0.0)
a.requires_grad = True
b.requires_grad = True
cosa = torch.cos(a)
cosb = torch.cos(b)
y1 = cosa + cosb
y2 = torch.tensor([
    cosa, cosb
])
mat = torch.tensor([
    [1.0, 2.0],
    [3.0, 4.0]
])
y2 = torch.matmul(y2, mat)
y2.sum().backward()  # expect: GG104
print("a has grad ", a.requires_grad)
print("a grad", a.grad)
