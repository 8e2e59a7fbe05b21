"""Notebook-style linear regression: the labels come from a "true" nn.Linear whose weights were
never frozen, so y carries that layer's graph into every epoch."""
import torch
from torch import nn

true_model = nn.Linear(3, 1)
X = torch.randn(40, 3)
y = true_model(X) + 0.01 * torch.randn(40, 1)

net = nn.Linear(3, 1)
loss_fn = nn.MSELoss()
trainer = torch.optim.SGD(net.parameters(), lr=0.03)

num_epochs = 3
for epoch in range(num_epochs):
    for i in range(0, 40, 10):
        l = loss_fn(net(X[i:i + 10]), y[i:i + 10])
        trainer.zero_grad()
        l.backward()  # expect: GG101
        trainer.step()
    print(f"epoch {epoch + 1}, loss {loss_fn(net(X), y).item():f}")
