# Source: https://discuss.pytorch.org/t/inplace-operation-changes-is-leaf-attribute/120297
"""The forum thread "Inplace operation changes is_leaf attribute": the poster tries several ways of
changing the data of `c = torch.randn(10, 3, 2, 32, requires_grad=True)` in place; the first,
`c += 1`, raises "a leaf Variable that requires grad is being used in an in-place operation" (the
poster wrapped each attempt in try/except; here the first attempt runs bare, as it would in a
program). The poster's later attempts (add_ and index_copy_ raise the same error, out= another
one) are not reached."""
import torch

c = torch.randn(10, 3, 2, 32, requires_grad=True)
print(c.is_leaf)
# operation 1
c += 1  # expect: GG108
# operation 3
c.add_(1)
# operation 5
d = c.detach()
d += 1  # no error, and still leaf
print(c.is_leaf)
