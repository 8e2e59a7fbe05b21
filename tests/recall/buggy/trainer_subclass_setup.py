"""A small Lightning-like framework: the base class calls setup() once and training_step() per
batch; the subclass computes class prototypes in setup() from the trainable encoder."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BaseTrainer:
    def __init__(self, model, lr=1e-2):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr)

    def setup(self, data):
        pass

    def training_step(self, batch):
        raise NotImplementedError

    def fit(self, data, epochs=2):
        self.setup(data)
        for epoch in range(epochs):
            for batch in data:
                loss = self.training_step(batch)
                self.opt.zero_grad()
                loss.backward()  # expect: GG101
                self.opt.step()


class PrototypeTrainer(BaseTrainer):
    def setup(self, data):
        xs = torch.cat([x for x, _ in data])
        ys = torch.cat([y for _, y in data])
        z = self.model(xs)
        self.prototypes = torch.stack([z[ys == c].mean(0) for c in range(2)])

    def training_step(self, batch):
        x, y = batch
        logits = -torch.cdist(self.model(x), self.prototypes)
        return F.cross_entropy(logits, y)


data = [(torch.randn(4, 5), torch.tensor([0, 1, 0, 1])) for _ in range(2)]
PrototypeTrainer(nn.Linear(5, 3)).fit(data)
