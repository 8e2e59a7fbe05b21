# Source: https://blog.csdn.net/nlh_tutu/category_11677089.html
"""The right fix (the stored copy of the post shows the failing loop only): compute f inside the
loop, from the current x, so every backward walks a fresh graph that saved this iteration's x;
retain_graph is no longer needed."""
import torch
import torch.optim

x = torch.tensor([3, 6], dtype=torch.float32)
x.requires_grad_(True)
optimizer = torch.optim.SGD([x], lr=0.1, momentum=0)
for i in range(10):
    optimizer.zero_grad()
    f = (x**2).sum()
    f.backward()
    optimizer.step()
    print(x.grad, x)
