# Source: https://github.com/pytorch/pytorch/issues/6991
""""clamp makes grad None": the reporter creates `a` with requires_grad=True, then rebinds the name
to its clamped copy, `a = torch.clamp(a, 0, 1)`, computes `z = 2 * a`, backwards z and prints
`a.requires_grad` (True) and `a.grad` (None). The name now holds the clamp's output, a non-leaf,
whose .grad autograd does not keep; torch 2.13 warns that the .grad of a non-leaf is being read
and returns None (printed, so the program runs on). The reporter's first snippet, as posted, run
for a few random draws as in their experiment."""
import torch

for trial in range(3):
    a = torch.rand(1, requires_grad=True)
    a = torch.clamp(a, 0, 1)
    z = 2 * a
    z.backward()
    print(a.requires_grad)  # True
    print(a.grad)  # expect: GG106
