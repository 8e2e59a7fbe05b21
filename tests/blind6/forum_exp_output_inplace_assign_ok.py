# Source: https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3
"""The fix (the thread states the rule and gives none): a saved output that must change is edited
in a copy. The value 666 goes into `uexp.clone()`, so ExpBackward's saved output keeps its version
and the second backward (through the retained graph) works; u, which exp did not save, is still
written in place."""
import torch

print(torch.__version__)

t = torch.arange(3.0, requires_grad=True)
u = 2 * t                             # (so it won't be a leaf variable)
uexp = u.exp()                        # uexp is the gradient of u.exp()
loss = uexp.sum()                     # (some dummy loss)
u[0] = 666                            # inplace modification of u
loss.backward(retain_graph=True)      # okay
print(t.grad)
uexp_edited = uexp.clone()
uexp_edited[0] = 666                  # the copy, not the saved output
loss.backward()
print(t.grad, uexp_edited)
