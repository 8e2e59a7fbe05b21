# Source: https://hatchjs.com/grad-can-be-implicitly-created-only-for-scalar-outputs/
"""The weighted-loss trainer with the article's fix: the per-sample losses, weighted, are reduced
to their mean, a scalar, before `backward()`.
"""
import torch
import torch.nn as nn


class WeightedTrainer:
    def __init__(self, model, lr=1e-2):
        self.model = model
        self.criterion = nn.CrossEntropyLoss(reduction="none")
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)

    def loss_fn(self, logits, y, weights):
        per_sample = self.criterion(logits, y)
        return (per_sample * weights).mean()

    def train_step(self, x, y, weights):
        self.opt.zero_grad()
        loss = self.loss_fn(self.model(x), y, weights)
        loss.backward()
        self.opt.step()
        return loss.item()


model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
trainer = WeightedTrainer(model)
x = torch.randn(10, 6)
y = torch.randint(0, 3, (10,))
weights = torch.where(y == 2, 2.0, 1.0)
for epoch in range(3):
    print(epoch, trainer.train_step(x, y, weights))
