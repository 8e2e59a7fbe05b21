# Source: https://geek-docs.com/pytorch/pytorch-questions/409_pytorch_pytorch_runtimeerror_element_0_of_tensors_does_not_require_grad_and_does_not_have_a_grad_fn.html
"""The geek-docs post "PyTorch RuntimeError: element 0 of tensors does not require grad and does
not have a grad_fn": a tensor x made without requires_grad, its first element squared, and the
result backwarded; x was never tracked, so backward() raises the error. The post's example."""
import torch

x = torch.tensor([1.0, 2.0, 3.0])
print(x.requires_grad)
y = x[0] ** 2
y.backward()  # expect: GG104
print(x.grad)
