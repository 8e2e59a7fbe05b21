# Source: https://github.com/pytorch/pytorch/issues/19778
"""The reporter's "Grad is None after using view", fixed as the maintainers explained: the leaf is
the tensor created with requires_grad=True, so it is kept under its own name and the view is taken
from it; the gradient is read from the leaf."""
import torch

# test without view
X = torch.tensor([[[0.25]], [[0.75]]], requires_grad=True,)
print(f"X.shape: {X.shape}")
X.sum().backward()
print(f"X.grad: {X.grad}")

# test with view
X_leaf = torch.tensor([0.25, 0.75], requires_grad=True,)
X_view = X_leaf.view(2, 1, 1)
print(f"X_view.shape: {X_view.shape}")
X_view.sum().backward()
print(f"X_leaf.grad: {X_leaf.grad}")
print(f"X_leaf.grad is None: {X_leaf.grad is None}")
