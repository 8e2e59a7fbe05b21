# Source: https://github.com/pytorch/pytorch/issues/111369
"""The reporter's LBFGS regression with the fix they found: the forward pass moves into the
closure, so each of LBFGS's evaluations builds (and backwards) a graph of its own."""
import torch
from torch import nn, optim

x = torch.rand(size = (100, 10))
y = torch.rand(size = (100, 1))

class LinearRegression(nn.Module):
  def __init__(self, p):
    super(LinearRegression, self).__init__()

    self.p = p
    self.lin = nn.Linear(p, 1)

  def forward(self, x):
    output = self.lin(x)
    return output

model = LinearRegression(x.size(1))
optimizer = optim.LBFGS(model.parameters())
criterion = nn.MSELoss()

def closure():
  optimizer.zero_grad()
  pred = model(x)
  loss = criterion(pred, y.view(pred.shape))
  loss.backward()
  return loss

optimizer.step(closure)
