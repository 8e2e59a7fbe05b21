# Source: https://runebook.dev/en/docs/pytorch/generated/torch.tensor.retain_grad
"""The post's solution: call retain_grad() on the non-leaf hidden output before the backward
pass, so its .grad is populated for the log."""
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, n_in=10, n_hidden=20, n_out=3):
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.fc2 = nn.Linear(n_hidden, n_out)
        self.hidden = None

    def forward(self, x):
        self.hidden = torch.relu(self.fc1(x))
        self.hidden.retain_grad()
        return self.fc2(self.hidden)


model = MLP()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for step in range(3):
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    print(step, loss.item(), model.hidden.grad.norm().item())
    optimizer.step()
