"""Each epoch encodes the batches lazily with a generator expression as the loop's iterable."""
import torch
import torch.nn as nn

enc = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 2))
opt = torch.optim.SGD(enc.parameters(), lr=0.05)
xs = [torch.randn(4, 5) for _ in range(3)]
ys = [torch.randint(0, 2, (4,)) for _ in range(3)]
for epoch in range(2):
    for logits, y in zip((enc(x) for x in xs), ys):
        loss = nn.functional.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
