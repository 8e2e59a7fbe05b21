"""Knowledge distillation with the teacher's logits cached per batch in a dict, built once with a
dict comprehension before the epochs (the teacher was never put under no_grad)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

teacher = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5))
student = nn.Sequential(nn.Linear(10, 8), nn.ReLU(), nn.Linear(8, 5))
teacher.eval()
batches = {i: (torch.randn(6, 10), torch.randint(0, 5, (6,))) for i in range(3)}
teacher_logits = {i: teacher(x) for i, (x, _) in batches.items()}

opt = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)
T, alpha = 4.0, 0.7
for epoch in range(2):
    for i, (x, y) in batches.items():
        s = student(x)
        kd = F.kl_div(F.log_softmax(s / T, 1), F.softmax(teacher_logits[i] / T, 1), reduction="batchmean")
        loss = alpha * kd * T * T + (1 - alpha) * F.cross_entropy(s, y)
        opt.zero_grad()
        loss.backward()  # expect: GG101
        opt.step()
