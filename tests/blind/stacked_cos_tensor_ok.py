# Source: https://discuss.pytorch.org/t/gradient-is-lost-when-use-torch-tensor-t1-t2/23261
"""The poster's code with the answer's fix: torch.stack([cosa, cosb]) builds the vector inside the
graph, so the matrix product and the backward reach a and b."""
import torch

a = torch.tensor(0.0)
b = torch.tensor(0.0)
a.requires_grad = True
b.requires_grad = True
cosa = torch.cos(a)
cosb = torch.cos(b)
y1 = cosa + cosb
y2 = torch.stack([
    cosa, cosb
])
mat = torch.tensor([
    [1.0, 2.0],
    [3.0, 4.0]
])
y2 = torch.matmul(y2, mat)
y2.sum().backward()
print("a has grad ", a.requires_grad)
print("a grad", a.grad)
