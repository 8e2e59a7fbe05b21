"""Multi-crop self-supervision: the global crop's embedding is the anchor, and each local crop's
loss against it is backwarded inside the loop over crops."""
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 8))
opt = torch.optim.SGD(net.parameters(), lr=0.01)
image = torch.randn(3, 12)
crops = [image + 0.1 * torch.randn_like(image) for _ in range(3)]
anchor = F.normalize(net(image), dim=-1)
opt.zero_grad()
for crop in crops:
    z = F.normalize(net(crop), dim=-1)
    loss = (2 - 2 * (z * anchor).sum(-1)).mean()
    loss.backward()  # expect: GG101
opt.step()
