# Source: https://stackoverflow.com/questions/63582590/why-do-we-call-detach-before-calling-numpy-on-a-pytorch-tensor
"""The Stack Overflow question "Why do we call .detach() before calling .numpy() on a Pytorch
Tensor?": the asker knows `my_tensor.detach().numpy()` is the established way and asks why,
illustrating with a tensor that requires grad converted directly, `tensor1 = tensor1.numpy()`,
which raises "Can't call numpy() on Tensor that requires grad". The accepted answer explains it
with the graph of `y = x @ w`, `z = y ** 2`. The thread's two snippets: the answer's graph
(backwarded, w.grad printed), then the question's direct conversion."""
import torch

x = torch.rand(4, requires_grad=True)
w = torch.rand(4, requires_grad=True)
y = x @ w   # inner product of x and w
z = y ** 2  # square the inner product
z.backward()
print(w.grad)

tensor1 = torch.tensor([1.0, 2.0], requires_grad=True)
tensor1 = tensor1.numpy()  # expect: GG107
print(tensor1)
