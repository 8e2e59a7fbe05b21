"""Distillation on a whole (small) dataset: the teacher's predictions for all samples are computed
once, then sliced per batch; the teacher's weights still require grad."""
import torch
import torch.nn as nn
import torch.nn.functional as F

X = torch.randn(20, 7)
teacher = nn.Sequential(nn.Linear(7, 32), nn.ReLU(), nn.Linear(32, 3))
student = nn.Sequential(nn.Linear(7, 8), nn.ReLU(), nn.Linear(8, 3))
soft_labels = F.softmax(teacher(X) / 3.0, dim=1)
optimizer = torch.optim.Adam(student.parameters(), lr=1e-2)

for i in range(0, 20, 5):
    xb, tb = X[i:i + 5], soft_labels[i:i + 5]
    loss = F.kl_div(F.log_softmax(student(xb) / 3.0, dim=1), tb, reduction="batchmean")
    optimizer.zero_grad()
    loss.backward()  # expect: GG101
    optimizer.step()
