# Source: https://theneuralbase.com/pytorch/errors/runtimeerror-variable-needed-for-gradient-is-none/
"""The error page "RuntimeError: variable needed for gradient computation is None" (train.py,
loss.backward()): its team note's "common mistake to avoid - mixing no_grad with
requires_grad": a value computed inside torch.no_grad() has no grad_fn, so the loss built from
it cannot be backwarded. A training script whose step helper runs the model's forward under
no_grad (copied from the evaluation helper); the page names the error "variable needed for
gradient is None", torch 2.13 raises "element 0 of tensors does not require grad and does not
have a grad_fn" at the backward."""
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x)


def evaluate(model, x, y, loss_fn):
    with torch.no_grad():
        return loss_fn(model(x), y).item()


def train_step(model, x, y, loss_fn, optimizer):
    with torch.no_grad():
        pred = model(x)
    loss = loss_fn(pred, y)
    optimizer.zero_grad()
    loss.backward()  # expect: GG104
    optimizer.step()
    return loss.item()


model = Regressor()
loss_fn = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(3):
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    print(epoch, train_step(model, x, y, loss_fn, optimizer), evaluate(model, x, y, loss_fn))
