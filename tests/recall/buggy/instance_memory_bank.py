"""Instance discrimination with a memory bank: after each step the batch's embeddings are written
into the bank by index (bank[idx] = ...), with their graph, and later batches score against it."""
import torch
import torch.nn as nn
import torch.nn.functional as F

n_items, dim = 12, 6
net = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, dim))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
data = torch.randn(n_items, 5)
bank = F.normalize(torch.randn(n_items, dim), dim=1)

for epoch in range(2):
    for idx in torch.arange(n_items).split(4):
        z = F.normalize(net(data[idx]), dim=1)
        logits = z @ bank.t() / 0.1
        loss = F.cross_entropy(logits, idx)
        opt.zero_grad()
        loss.backward()  # expect: GG101
        opt.step()
        bank[idx] = 0.5 * bank[idx] + 0.5 * z
        bank = F.normalize(bank, dim=1)
