"""Distillation whose teacher logits are cached per batch by a @torch.no_grad() helper."""
import torch
import torch.nn as nn
import torch.nn.functional as F

teacher = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5)).eval()
student = nn.Sequential(nn.Linear(10, 8), nn.ReLU(), nn.Linear(8, 5))
batches = {i: (torch.randn(6, 10), torch.randint(0, 5, (6,))) for i in range(3)}


@torch.no_grad()
def soft_targets(model, x, T):
    return F.softmax(model(x) / T, dim=1)


T = 4.0
targets = {i: soft_targets(teacher, x, T) for i, (x, _) in batches.items()}
opt = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)
for epoch in range(2):
    for i, (x, y) in batches.items():
        s = student(x)
        loss = F.kl_div(F.log_softmax(s / T, 1), targets[i], reduction="batchmean") * T * T
        loss = 0.7 * loss + 0.3 * F.cross_entropy(s, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
