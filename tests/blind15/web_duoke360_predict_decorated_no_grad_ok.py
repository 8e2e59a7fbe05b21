# Source: https://duoke360.com/post/34567
"""The classifier wrapper with the fix (the post's: the forward that is backwarded must not run in a
no_grad context): the training step calls the model itself; the `@torch.no_grad()` `predict` is
only used for the accuracy.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self, n_in=20, n_hidden=32, n_classes=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_in, n_hidden), nn.ReLU(), nn.Linear(n_hidden, n_classes))

    def forward(self, x):
        return self.body(x)

    @torch.no_grad()
    def predict(self, x):
        return self.forward(x)


class Trainer:
    def __init__(self, model, lr=1e-2):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)

    def train_step(self, x, y):
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()

    def accuracy(self, x, y):
        return (self.model.predict(x).argmax(1) == y).float().mean().item()


torch.manual_seed(0)
x, y = torch.randn(64, 20), torch.randint(0, 4, (64,))
trainer = Trainer(Classifier())
for epoch in range(3):
    print(epoch, trainer.train_step(x, y), trainer.accuracy(x, y))
