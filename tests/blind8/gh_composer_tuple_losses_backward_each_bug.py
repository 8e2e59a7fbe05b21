# Source: https://github.com/mosaicml/composer/pull/1240
"""Composer's Trainer._train_microbatch as it stood before the pull request: when a model's
loss() returns a tuple of losses, the trainer scales each in place for gradient accumulation and
then calls loss.backward() on each in turn. The losses share the model's forward, so the second
backward walks a graph the first has freed: "Trying to backward through the graph a second time".
The model is a small classifier with an auxiliary head (as GoogLeNet's aux logits) whose loss()
returns (main loss, auxiliary loss); the trainer keeps composer's microbatch loop and loss
scaling, without its events, precision contexts and DeepSpeed branches; the batches are random."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def ensure_tuple(x):
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


class AuxClassifier(nn.Module):
    """A ComposerModel: forward(batch) -> outputs, loss(outputs, batch) -> tuple of losses."""

    def __init__(self, num_classes=4, aux_weight=0.3):
        super().__init__()
        self.trunk = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                   nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                   nn.Flatten())
        self.head = nn.Linear(16, num_classes)
        self.aux_head = nn.Linear(16, num_classes)
        self.aux_weight = aux_weight

    def forward(self, batch):
        inputs, _ = batch
        features = self.trunk(inputs)
        return self.head(features), self.aux_head(features)

    def loss(self, outputs, batch):
        logits, aux_logits = outputs
        _, targets = batch
        return F.cross_entropy(logits, targets), self.aux_weight * F.cross_entropy(aux_logits, targets)


class State:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.batch = self.outputs = self.loss = None


class Trainer:
    def __init__(self, model, optimizer, grad_accum=2):
        self.state = State(model, optimizer)
        self._original_model = model
        self.grad_accum = grad_accum
        self._backwards_create_graph = False

    def _train_batch(self, batch):
        self.state.optimizer.zero_grad()
        inputs, targets = batch
        current_batch_size = inputs.size(0)
        total_loss = torch.zeros(1)
        for microbatch in zip(inputs.chunk(self.grad_accum), targets.chunk(self.grad_accum)):
            self._train_microbatch(microbatch, current_batch_size, total_loss)
        self.state.optimizer.step()
        return total_loss

    def _train_microbatch(self, microbatch, current_batch_size, total_loss):
        self.state.batch = microbatch
        microbatch_num_samples = microbatch[0].size(0)

        # forward pass
        self.state.outputs = self.state.model(self.state.batch)

        # loss
        self.state.loss = self._original_model.loss(self.state.outputs, self.state.batch)

        for loss in ensure_tuple(self.state.loss):
            loss.mul_(microbatch_num_samples / current_batch_size)
            total_loss += loss.detach().clone()

        # backward
        for loss in ensure_tuple(self.state.loss):
            loss.backward(create_graph=self._backwards_create_graph)  # expect: GG101

    def fit(self, dataloader):
        self.state.model.train()
        for i, batch in enumerate(dataloader):
            print(i, self._train_batch(batch).item())


model = AuxClassifier()
trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), grad_accum=2)
trainer.fit([(torch.randn(8, 3, 16, 16), torch.randint(0, 4, (8,))) for _ in range(2)])
