# Source: https://geek-docs.com/pytorch/pytorch-questions/409_pytorch_pytorch_runtimeerror_element_0_of_tensors_does_not_require_grad_and_does_not_have_a_grad_fn.html
"""The post's first fix: create x with requires_grad=True, so the square of its first element is
tracked and backward() gives x.grad = [2., 0., 0.]."""
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
print(x.requires_grad)
y = x[0] ** 2
y.backward()
print(x.grad)
