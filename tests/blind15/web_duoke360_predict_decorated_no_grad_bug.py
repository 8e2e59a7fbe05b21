# Source: https://duoke360.com/post/34567
"""The duoke360 post "pytorch .backward()后grad为None" lists why gradients go missing; its case 4 is
a tensor computed under `torch.no_grad()` and then backwarded, which raises "element 0 of tensors
does not require grad and does not have a grad_fn". Here a small classifier wrapper decorates its
`predict` helper with `@torch.no_grad()` (meant for evaluation) and the training step reuses
`predict` for the logits, so `loss.backward()` raises. Fix (the post's: keep the training forward
out of the no_grad context): the training step calls the model directly; `predict` is only used to
evaluate.
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
        logits = self.model.predict(x)
        loss = F.cross_entropy(logits, y)
        self.opt.zero_grad()
        loss.backward()  # expect: GG104
        self.opt.step()
        return loss.item()

    def accuracy(self, x, y):
        return (self.model.predict(x).argmax(1) == y).float().mean().item()


torch.manual_seed(0)
x, y = torch.randn(64, 20), torch.randint(0, 4, (64,))
trainer = Trainer(Classifier())
for epoch in range(3):
    print(epoch, trainer.train_step(x, y), trainer.accuracy(x, y))
