# Source: https://runebook.dev/en/docs/pytorch/generated/torch.tensor.retain_grad
"""The post "Understanding and Using torch.Tensor.retain_grad()": "You're training a model and
want to inspect the gradients of a hidden layer's output to debug or visualize something", but
after the backward pass the hidden output's .grad is None, since PyTorch keeps gradients of
leaf tensors only. An MLP classifier that keeps its hidden activation on the module for a
gradient-norm log after each backward; reading .grad of that non-leaf warns and returns None,
and the logging line fails on the None."""
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
        return self.fc2(self.hidden)


model = MLP()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for step in range(3):
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    print(step, loss.item(), model.hidden.grad.norm().item())  # expect: GG106
    optimizer.step()
