"""Notebook flow: one cell runs the forward pass, the next cell trains; the training loop reuses
the outputs of the earlier cell instead of calling the model again."""
import torch
import torch.nn as nn

# In [1]
X = torch.randn(16, 4)
y = torch.randn(16, 1)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

# In [2]
y_pred = model(X)
print(y_pred[:2])

# In [3]
for epoch in range(5):
    loss = criterion(y_pred, y)
    optimizer.zero_grad()
    loss.backward()  # expect: GG101
    optimizer.step()
