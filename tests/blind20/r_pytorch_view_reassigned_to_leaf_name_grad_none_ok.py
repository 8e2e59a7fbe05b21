# Source: https://github.com/pytorch/pytorch/issues/32708
"""pytorch issue #32708 ("tensor.view loses gradient"): a leaf created with
``torch.linspace(..., requires_grad=True)`` is reshaped with ``.view(2, 4, 2, 2)``.  When the view
gets its own name (``lhs_pos2``) the leaf's ``.grad`` holds ones after backward; when the view is
assigned back to the same name (``lhs_pos = lhs_pos.view(...)``), ``lhs_pos.grad`` is ``None``.

Reassigning the name rebinds ``lhs_pos`` to the view, a non-leaf tensor produced by
``ViewBackward``; the leaf that received the gradient is no longer reachable by that name.
Reading ``.grad`` of the non-leaf view makes torch warn ("The .grad attribute of a Tensor that is
not a leaf Tensor is being accessed") and gives ``None`` -- not a bug in ``view`` (the maintainers'
answer).  Fixed here: keep the leaf under its own name and give the view another name, as in the
reporter's "correct behavior" block.
"""
import torch

# correct behavior:
lhs_pos = torch.linspace(
    1, 32, steps=32, requires_grad=True, dtype=torch.float)

lhs_pos2 = lhs_pos.view(
    2, 4, 2, 2
)
lhs_pos2.sum().backward()
print(lhs_pos.grad)

# formerly problematic case, fixed: the view gets its own name
lhs_pos = torch.linspace(
    1, 32, steps=32, requires_grad=True, dtype=torch.float)

lhs_pos_view = lhs_pos.view(
    2, 4, 2, 2
)
lhs_pos_view.sum().backward()
print(lhs_pos.grad)
