# Source: https://github.com/pytorch/pytorch/issues/19778
"""The reporter's "Grad is None after using view": X is created with requires_grad=True and summed,
and X.grad holds the gradient; X_view is created the same way and then reshaped with
`.view(2, 1, 1)` in the same expression, so the name holds the view, a non-leaf, and its .grad
is None after backward (read twice: printed, then compared with None). The reporter's script,
as posted."""
import torch

# test without view
X = torch.tensor([[[0.25]], [[0.75]]], requires_grad=True,)
print(f"X.shape: {X.shape}")
X.sum().backward()
print(f"X.grad: {X.grad}")

# test with view
X_view = torch.tensor([0.25, 0.75], requires_grad=True,).view(2, 1, 1)
print(f"X_view.shape: {X_view.shape}")
X_view.sum().backward()
print(f"X_view.grad: {X_view.grad}")  # expect: GG106
print(f"X_view.grad is None: {X_view.grad is None}")  # expect: GG106
