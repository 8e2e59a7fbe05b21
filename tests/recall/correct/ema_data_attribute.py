"""Mean teacher updated through .data (the older idiom), teacher outputs used undetached."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

student = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
teacher = copy.deepcopy(student)
for p in teacher.parameters():
    p.requires_grad_(False)
opt = torch.optim.SGD(student.parameters(), lr=0.05)
x_unl = torch.randn(10, 4)
for step in range(4):
    s_out, t_out = student(x_unl + 0.1 * torch.randn_like(x_unl)), teacher(x_unl)
    loss = F.mse_loss(F.softmax(s_out, 1), F.softmax(t_out, 1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    for t_p, s_p in zip(teacher.parameters(), student.parameters()):
        t_p.data.mul_(0.99).add_(s_p.data, alpha=0.01)
