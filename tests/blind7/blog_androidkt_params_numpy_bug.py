# Source: https://androidkt.com/fix-cant-call-numpy-on-tensor-that-requires-grad-use-tensor-detach-numpy-instead/
"""The androidkt post "Fix: Can't call numpy() on Tensor that requires grad": a parameters tensor
made with requires_grad=True, so autograd tracks every tensor computed from it, is turned into a
NumPy array with a.numpy(), and torch raises "Can't call numpy() on Tensor that requires grad.
Use tensor.detach().numpy() instead". The post's example."""
import torch
import torch.nn as nn

a = torch.tensor([1,2,3.], requires_grad=True)
print(a.numpy())  # expect: GG107
