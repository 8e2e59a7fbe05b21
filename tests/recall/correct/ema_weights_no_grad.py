"""Teacher weights as a list averaged from the student's parameters inside torch.no_grad()."""
import torch
import torch.nn as nn
import torch.nn.functional as F

student = nn.Linear(4, 3)
ema = [p.detach().clone() for p in student.parameters()]
opt = torch.optim.SGD(student.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
for step in range(4):
    s_logits = student(x)
    t_logits = F.linear(x, ema[0], ema[1])
    loss = F.cross_entropy(s_logits, y) + F.mse_loss(s_logits.softmax(1), t_logits.softmax(1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        ema = [0.9 * e + 0.1 * p for e, p in zip(ema, student.parameters())]
