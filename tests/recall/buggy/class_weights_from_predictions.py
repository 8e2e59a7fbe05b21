"""Class-balanced training whose class weights are derived from the model's own mean predicted
probabilities on a held-out batch, computed once before training with grad enabled (applied per sample, as F.cross_entropy's
weight= refuses a tensor that requires grad)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x_val = torch.randn(30, 5)
prior = F.softmax(model(x_val), dim=1).mean(0)
class_weights = 1.0 / (prior * 3)

for epoch in range(3):
    x, y = torch.randn(10, 5), torch.randint(0, 3, (10,))
    per_sample = F.cross_entropy(model(x), y, reduction="none")
    loss = (per_sample * class_weights[y]).mean()
    optimizer.zero_grad()
    loss.backward()  # expect: GG101
    optimizer.step()
