# Source: https://androidkt.com/fix-cant-call-numpy-on-tensor-that-requires-grad-use-tensor-detach-numpy-instead/
"""The post's two fixes: detach the tensor from the graph first, a.detach().numpy() (same storage,
no gradient tracking), or compute the values to convert under torch.no_grad(), whose results do
not require grad."""
import torch
import torch.nn as nn

a = torch.tensor([1,2,3.], requires_grad=True)
print(a.detach().numpy())
with torch.no_grad():
    b = a * 2
print(b.numpy())
