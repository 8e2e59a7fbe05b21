"""Instance discrimination with a memory bank updated from detached embeddings."""
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 6))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
data = torch.randn(12, 5)
bank = F.normalize(torch.randn(12, 6), dim=1)
for epoch in range(2):
    for idx in torch.arange(12).split(4):
        z = F.normalize(net(data[idx]), dim=1)
        loss = F.cross_entropy(z @ bank.t() / 0.1, idx)
        opt.zero_grad()
        loss.backward()
        opt.step()
        bank[idx] = F.normalize(0.5 * bank[idx] + 0.5 * z.detach(), dim=1)
