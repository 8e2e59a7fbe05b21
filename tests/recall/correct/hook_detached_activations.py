"""Forward hooks that store detached activations for monitoring, read after each step."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 2))
stats = {}
model[1].register_forward_hook(lambda m, i, o: stats.__setitem__("relu", o.detach()))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x, y = torch.randn(4, 5), torch.randint(0, 2, (4,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    dead = (stats["relu"] == 0).float().mean().item()
