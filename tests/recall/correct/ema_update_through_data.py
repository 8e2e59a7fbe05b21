"""An EMA teacher updated through .data, with the teacher's output detached in the loss."""
import copy
import torch
import torch.nn as nn

student = nn.Linear(4, 3)
teacher = copy.deepcopy(student)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
for step in range(4):
    x = torch.randn(6, 4)
    loss = (student(x) - teacher(x).detach()).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    for t, s in zip(teacher.parameters(), student.parameters()):
        t.data.mul_(0.9).add_(0.1 * s.data)
