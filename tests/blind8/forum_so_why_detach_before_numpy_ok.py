# Source: https://stackoverflow.com/questions/63582590/why-do-we-call-detach-before-calling-numpy-on-a-pytorch-tensor
"""The answers' fix: detach the tensor from the graph first, `tensor1.detach().numpy()`
(the NumPy array shares the tensor's memory, and no gradient can flow through it)."""
import torch

x = torch.rand(4, requires_grad=True)
w = torch.rand(4, requires_grad=True)
y = x @ w   # inner product of x and w
z = y ** 2  # square the inner product
z.backward()
print(w.grad)

tensor1 = torch.tensor([1.0, 2.0], requires_grad=True)
tensor1 = tensor1.detach().numpy()
print(tensor1)
