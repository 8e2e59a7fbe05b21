# Source: https://discuss.pytorch.org/t/why-doesnt-backward-work-on-nonscalar-outputs/47777
"""The forum poster's question "Why doesn't backward() work on nonscalar outputs?": a two-element
leaf t1 (requires_grad_ set after construction), t2 = t1 * t1, and t2.backward() "fails": torch
raises "grad can be implicitly created only for scalar outputs" (it will not put the Jacobian in
t1.grad). The poster's snippet, printed as they would."""
import torch

t1 = torch.Tensor([1, 3])
t1.requires_grad_(True)
t2 = t1 * t1

t2.backward()  # fails  # expect: GG105
print(t1.grad)
