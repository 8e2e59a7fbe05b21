# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/18254
"""The same LightningModule with the maintainers' workaround from issue 18254: torch's AdamW, whose
step runs the closure under `torch.enable_grad()`, so training_step builds a graph and the closure's
backward works. Same classifier, Lightning closure stand-in and random data."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 3))

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.encoder(x)
        return F.cross_entropy(logits, y)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=2e-5, weight_decay=0.01)


class Closure:
    """Lightning's automatic-optimization closure: training_step, zero_grad, backward."""

    def __init__(self, model, optimizer, batch, batch_idx):
        self.model, self.optimizer, self.batch, self.batch_idx = model, optimizer, batch, batch_idx
        self.loss = None

    def __call__(self):
        self.loss = self.model.training_step(self.batch, self.batch_idx)
        self.optimizer.zero_grad()
        self.loss.backward()
        return self.loss


def fit(model, batches, max_epochs=2):
    optimizer = model.configure_optimizers()
    model.train()
    for epoch in range(max_epochs):
        for batch_idx, batch in enumerate(batches):
            closure = Closure(model, optimizer, batch, batch_idx)
            optimizer.step(closure=closure)
            print(epoch, batch_idx, closure.loss.item())


batches = [(torch.randn(8, 16), torch.randint(0, 3, (8,))) for _ in range(3)]
fit(Classifier(), batches)
