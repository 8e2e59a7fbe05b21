# Source: https://discuss.pytorch.org/t/backpropagation-graph-is-reused-while-it-shouldnt/24554
"""The forum poster's "Graph is reused while it shouldn't" example: a transform `t` and a vector
`a`, both leaves that require grad, and `y = t @ a` computed once before the loop. Every iteration
builds a new `x_out = t @ (x + y)` and a new loss, but they all hang on the one `y` node, whose saved
tensors (t and a) the first iteration's `loss.backward()` frees; the second iteration's backward
reaches it again and raises "Trying to backward through the graph a second time". The poster notes
that writing `t @ (x + t @ a)` inside the loop works. Their snippet, with the backward and a plain
gradient step on t and a (under no_grad) that the "made up example" leaves out, run for a few
iterations."""
import torch

measure = torch.nn.MSELoss()

x = torch.tensor([1, 0], dtype=torch.float64)
t = torch.eye(2, dtype=torch.float64, requires_grad=True)
a = torch.ones(2, dtype=torch.float64, requires_grad=True)
y = t @ a

for __ in range(3):
    x_out = t @ (x + y)  # Raises `RuntimeError` later on.
    # x_out = t @ (x + t @ a)  # Works fine.
    loss = measure(x_out, x)
    loss.backward()  # expect: GG101
    with torch.no_grad():
        t -= 0.1 * t.grad
        a -= 0.1 * a.grad
        t.grad.zero_()
        a.grad.zero_()
    print(loss.item())
