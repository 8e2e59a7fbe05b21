# Source: https://theneuralbase.com/pytorch/learn/beginner/loss-backward-computing-gradients/
"""The note's fix: retain_graph=True on every backward but the last one, so the shared trunk's
graph survives the main loss's backward for the auxiliary loss's."""
import torch
import torch.nn as nn
from torch.optim import Adam


class MultiTaskNet(nn.Module):
    def __init__(self, n_in=3, n_hidden=16):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(n_in, n_hidden), nn.Tanh())
        self.main_head = nn.Linear(n_hidden, 1)
        self.aux_head = nn.Linear(n_hidden, 2)

    def forward(self, x):
        h = self.trunk(x)
        return self.main_head(h), self.aux_head(h)


torch.manual_seed(42)
model = MultiTaskNet()
loss_fn = nn.MSELoss()
optimizer = Adam(model.parameters(), lr=0.01)

for epoch in range(3):
    X = torch.randn(8, 3)
    y, y_aux = torch.randn(8, 1), torch.randn(8, 2)
    output, aux_output = model(X)
    loss = loss_fn(output, y)
    auxiliary_loss = 0.3 * loss_fn(aux_output, y_aux)
    optimizer.zero_grad(set_to_none=True)
    loss.backward(retain_graph=True)
    auxiliary_loss.backward()
    optimizer.step()
    print(epoch, loss.item(), auxiliary_loss.item())
