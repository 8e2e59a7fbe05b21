# Source: https://stackoverflow.com/questions/54754153/autograd-grad-for-tensor-in-pytorch/54757383
"""The question: the gradient of a network's output Y (batch x n) with respect to its input X
(batch x m), wanted for a new loss term, as tf.gradients(ys=Y, xs=X) gives it. As the
answer shows, torch.autograd.grad needs grad_outputs for a non-scalar Y (ones: the gradient of
Y.sum(), what tf.gradients computes)."""
import torch
import torch.nn as nn
from torch.autograd import grad


class Net(nn.Module):
    def __init__(self, m=6, n=3):
        super().__init__()
        self.convs = nn.Sequential(nn.Conv1d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv1d(4, 1, 3, padding=1))
        self.out = nn.Linear(m, n)

    def forward(self, x):
        return self.out(self.convs(x.unsqueeze(1)).squeeze(1))


net = Net()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
X = torch.randn(4, 6, requires_grad=True)
target = torch.randn(4, 3)
Y = net(X)
dY_dX = grad(outputs=Y, inputs=X, grad_outputs=torch.ones_like(Y), create_graph=True)[0]
loss = nn.functional.mse_loss(Y, target) + 0.1 * dY_dX.pow(2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
