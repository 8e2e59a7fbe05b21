# Source: https://github.com/pytorch/pytorch/issues/111369
"""The reporter's Colab code: a linear regression trained with optim.LBFGS, whose closure computes
the loss from `pred`, the model output computed once before the closure. LBFGS calls the closure
several times per step; the second call backwards through the forward pass the first call's
backward already freed."""
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

pred = model(x)

def closure():
  optimizer.zero_grad()
  loss = criterion(pred, y.view(pred.shape))
  loss.backward()  # expect: GG101
  return loss

optimizer.step(closure)
