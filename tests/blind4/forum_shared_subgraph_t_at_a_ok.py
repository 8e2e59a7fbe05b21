# Source: https://discuss.pytorch.org/t/backpropagation-graph-is-reused-while-it-shouldnt/24554
"""The forum example with `y = t @ a` recomputed inside the loop, the variant the poster reports
working: every iteration's graph is built, and freed, by that iteration alone. (retain_graph=True,
which the poster considers, would keep the first `y` alive, and the in-place steps on t and a
would then invalidate what it saved.)"""
import torch

measure = torch.nn.MSELoss()

x = torch.tensor([1, 0], dtype=torch.float64)
t = torch.eye(2, dtype=torch.float64, requires_grad=True)
a = torch.ones(2, dtype=torch.float64, requires_grad=True)

for __ in range(3):
    y = t @ a
    x_out = t @ (x + y)
    loss = measure(x_out, x)
    loss.backward()
    with torch.no_grad():
        t -= 0.1 * t.grad
        a -= 0.1 * a.grad
        t.grad.zero_()
        a.grad.zero_()
    print(loss.item())
