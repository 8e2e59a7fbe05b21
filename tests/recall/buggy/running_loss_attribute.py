"""A training-loop class accumulates the epoch loss on self with += (for logging) and backwards
that running total each step instead of the step's own loss."""
import torch
import torch.nn as nn


class Loop:
    def __init__(self, model, lr=0.05):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)
        self.epoch_loss = 0.0

    def step(self, x, y):
        loss = nn.functional.mse_loss(self.model(x), y)
        self.epoch_loss += loss
        self.opt.zero_grad()
        self.epoch_loss.backward()  # expect: GG101
        self.opt.step()

    def run_epoch(self, batches):
        self.epoch_loss = 0.0
        for x, y in batches:
            self.step(x, y)
        return float(self.epoch_loss) / len(batches)


loop = Loop(nn.Linear(3, 1))
data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
loop.run_epoch(data)
