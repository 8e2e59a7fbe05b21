"""An EMA teacher updated by a function decorated with @torch.no_grad()."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

student = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
teacher = copy.deepcopy(student)
for p in teacher.parameters():
    p.requires_grad_(False)
opt = torch.optim.SGD(student.parameters(), lr=0.1)


@torch.no_grad()
def ema(decay=0.99):
    for t, s in zip(teacher.parameters(), student.parameters()):
        t.mul_(decay).add_(s, alpha=1 - decay)


for step in range(4):
    x = torch.randn(6, 4)
    loss = F.mse_loss(student(x).softmax(1), teacher(x).softmax(1)) + student(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema()
