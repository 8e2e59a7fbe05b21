# Source: https://www.codegenes.net/blog/pytorch-block-gradient
"""The blog on blocking gradients in PyTorch (requires_grad=False, `torch.no_grad()`, `detach()`)
shows that a backward over tensors computed with no tracking raises "element 0 of tensors does not
require grad and does not have a grad_fn". Here a knowledge-distillation step blocks the teacher's
gradients with `torch.no_grad()`, but the helper runs the student inside the same block, so the
distillation loss has no grad_fn and `loss.backward()` raises. Fix (the blog's use of the context
manager: only the operations that need no gradients go inside it): the student runs outside.
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
    loss.backward()  # expect: GG104
    opt.step()
    print(step, loss.item())
