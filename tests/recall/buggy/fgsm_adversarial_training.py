"""Adversarial training with FGSM: the clean loss is backwarded to get the input gradient, then the
clean loss is added to the adversarial loss and the sum is backwarded."""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Flatten(), nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
eps = 0.1

for step in range(2):
    images = torch.rand(5, 1, 4, 4).requires_grad_(True)
    labels = torch.randint(0, 4, (5,))
    clean_loss = F.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    clean_loss.backward()
    adv = (images + eps * images.grad.sign()).clamp(0, 1).detach()
    loss = clean_loss + F.cross_entropy(model(adv), labels)
    optimizer.zero_grad()
    loss.backward()  # expect: GG101
    optimizer.step()
