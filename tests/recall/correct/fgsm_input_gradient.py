"""FGSM adversarial training: the input gradient comes from autograd.grad with retain_graph=True,
and the clean plus adversarial loss is backwarded once."""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Flatten(), nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    images = torch.rand(5, 1, 4, 4).requires_grad_(True)
    labels = torch.randint(0, 4, (5,))
    clean_loss = F.cross_entropy(model(images), labels)
    grad, = torch.autograd.grad(clean_loss, images, retain_graph=True)
    adv = (images + 0.1 * grad.sign()).clamp(0, 1).detach()
    loss = clean_loss + F.cross_entropy(model(adv), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
