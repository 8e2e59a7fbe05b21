# Source: https://discuss.pytorch.org/t/how-to-define-a-leaf-tensor-in-pytorch-0-4-1/28461
"""The poster's "Case 1": a tensor is created with requires_grad=True and then moved with .cuda(),
and after backward its .grad is None. The move is an operation autograd records (the answer:
"You could substitute .cuda() for * 2"), so the tensor the program keeps is not a leaf. This
CPU-only reproduction moves it with .double(), a recorded cast like .cuda(); the gradient step
then uses the None it read."""
import torch

torch.manual_seed(0)
target = torch.randn(5, dtype=torch.float64)
x = torch.randn(5, requires_grad=True).double()
lr = 0.1

for it in range(3):
    loss = ((x - target) ** 2).sum()
    loss.backward()
    print(x.is_leaf, loss.item())
    x.data -= lr * x.grad  # expect: GG106
