# Source: https://www.codegenes.net/blog/pytorch-block-gradient
"""The distillation step with the fix: only the teacher's forward is inside `torch.no_grad()`; the
student runs outside it, so the loss carries the student's graph.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def mlp(width):
    return nn.Sequential(nn.Linear(16, width), nn.ReLU(), nn.Linear(width, 5))


def forward_pair(teacher, student, x):
    with torch.no_grad():
        t_logits = teacher(x)
    s_logits = student(x)
    return t_logits, s_logits


def kd_loss(s_logits, t_logits, labels, T=2.0, alpha=0.7):
    soft = F.kl_div(F.log_softmax(s_logits / T, dim=1), F.softmax(t_logits / T, dim=1),
                    reduction="batchmean") * T * T
    return alpha * soft + (1 - alpha) * F.cross_entropy(s_logits, labels)


teacher, student = mlp(64), mlp(8)
teacher.eval()
opt = torch.optim.Adam(student.parameters(), lr=1e-3)
for step in range(3):
    x, labels = torch.randn(32, 16), torch.randint(0, 5, (32,))
    t_logits, s_logits = forward_pair(teacher, student, x)
    loss = kd_loss(s_logits, t_logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
