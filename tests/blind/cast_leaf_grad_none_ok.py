# Source: https://discuss.pytorch.org/t/how-to-define-a-leaf-tensor-in-pytorch-0-4-1/28461
"""The poster's "Case 2" / the answer: the tensor is created with its final type and device and
only then marked as requiring grad (requires_grad_() after the cast), so it is a leaf and its
.grad is filled by backward."""
import torch

torch.manual_seed(0)
target = torch.randn(5, dtype=torch.float64)
x = torch.randn(5).double().requires_grad_()
lr = 0.1

for it in range(3):
    loss = ((x - target) ** 2).sum()
    loss.backward()
    print(x.is_leaf, loss.item())
    x.data -= lr * x.grad
    x.grad.zero_()
