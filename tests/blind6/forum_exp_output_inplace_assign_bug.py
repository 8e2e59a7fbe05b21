# Source: https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3
"""The thread "When inplace operation are allowed and when not": the answer's session shows that
exp saves its output, not its input. u = 2 * t, uexp = u.exp(), loss = uexp.sum(); writing
`u[0] = 666` leaves the first `loss.backward(retain_graph=True)` working, but after
`uexp[0] = 666` the next `loss.backward()` raises "one of the variables needed for gradient
computation has been modified by an inplace operation". The answer's session, as a script."""
import torch

print(torch.__version__)

t = torch.arange(3.0, requires_grad=True)
u = 2 * t                             # (so it won't be a leaf variable)
uexp = u.exp()                        # uexp is the gradient of u.exp()
loss = uexp.sum()                     # (some dummy loss)
u[0] = 666                            # inplace modification of u
loss.backward(retain_graph=True)      # okay
print(t.grad)
uexp[0] = 666                         # inplace modification of uexp
loss.backward()  # expect: GG103
print(t.grad)
