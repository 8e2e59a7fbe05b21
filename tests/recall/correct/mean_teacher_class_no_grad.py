"""A mean-teacher class whose update copies an average of the weights under torch.no_grad()."""
import copy
import torch
import torch.nn as nn


class MeanTeacher:
    def __init__(self, model, decay=0.99):
        self.model = copy.deepcopy(model)
        self.model.requires_grad_(False)
        self.decay = decay

    def update(self, student):
        with torch.no_grad():
            for t, s in zip(self.model.parameters(), student.parameters()):
                t.copy_(self.decay * t + (1 - self.decay) * s)

    def __call__(self, x):
        return self.model(x)


student = nn.Linear(3, 2)
teacher = MeanTeacher(student)
opt = torch.optim.Adam(student.parameters(), lr=1e-3)
for step in range(4):
    x = torch.randn(5, 3)
    loss = (student(x) - teacher(x)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    teacher.update(student)
