# Source: https://theneuralbase.com/pytorch/errors/runtimeerror-variable-needed-for-gradient-is-none/
"""The page's fix: use torch.no_grad() only where no gradient is wanted (the evaluation helper);
the training step's forward runs with grad enabled so the loss keeps its graph."""
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
    pred = model(x)
    loss = loss_fn(pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


model = Regressor()
loss_fn = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(3):
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    print(epoch, train_step(model, x, y, loss_fn, optimizer), evaluate(model, x, y, loss_fn))
