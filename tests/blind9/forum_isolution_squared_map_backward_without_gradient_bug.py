# Source: https://isolution.pro/pl/q/so70246575/funkcja-wsteczna-w-pytorch
"""The Q&A "Backward function in PyTorch" (a Stack Overflow question in translation): the asker
squares a 2x3 tensor and calls backward on the 2x3 result. As the answer explains, backward()
without an argument is for the scalar loss at the end of a network; called on the 2x3 `out`,
which is "no longer a scalar function", torch refuses to make the implicit gradient. The
answer's own per-element loop (a scalar out each time) runs first; then the whole map is
backwarded, as the asker did, but without the upstream gradient."""
import torch

a = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.float, requires_grad=True)
for i in range(2):
    for j in range(3):
        out = a[i, j] * a[i, j]
        out.backward()
print(a.grad)

a.grad = None
out = a * a
out.backward()  # expect: GG105
print(a.grad)
