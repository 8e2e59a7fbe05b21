"""Self-training with hard pseudo-labels (argmax) and a boolean confidence mask made once."""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x_unl = torch.randn(12, 6)
logits = model(x_unl)
pseudo = logits.argmax(dim=1)
mask = F.softmax(logits, dim=1).max(dim=1).values > 0.3
for epoch in range(3):
    per_sample = F.cross_entropy(model(x_unl), pseudo, reduction="none")
    loss = (per_sample * mask).sum() / mask.sum().clamp(min=1)
    opt.zero_grad()
    loss.backward()
    opt.step()
