# Source: https://isolution.pro/pl/q/so70246575/funkcja-wsteczna-w-pytorch
"""The answer's fix: give backward the upstream gradient d loss / d out of the 2x3 map,
out.backward(torch.ones(2, 3)), which yields the same 2a as the per-element loop."""
import torch

a = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.float, requires_grad=True)
for i in range(2):
    for j in range(3):
        out = a[i, j] * a[i, j]
        out.backward()
print(a.grad)

a.grad = None
out = a * a
out.backward(torch.ones(2, 3))
print(a.grad)
