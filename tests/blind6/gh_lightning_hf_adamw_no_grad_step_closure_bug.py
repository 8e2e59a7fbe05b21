# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/18254
"""PyTorch Lightning 2.0 with Hugging Face's AdamW (issue 18254): in automatic optimization Lightning
wraps training_step and backward in a closure and calls `optimizer.step(closure=closure)`. Hugging
Face's AdamW.step is decorated with `@torch.no_grad()` and calls `closure()` inside it without
re-enabling grad (torch's own optimizers wrap the closure in `torch.enable_grad()`), so
training_step runs with grad disabled, the loss has no grad_fn and the closure's backward fails
("element 0 of tensors does not require grad and does not have a grad_fn"; the maintainers'
workaround is torch's AdamW or `torch.set_grad_enabled(True)` in training_step, and the fix PR wraps
Lightning's closure in `torch.enable_grad`). transformers' AdamW.step (trimmed to the update itself),
a small LightningModule classifier and a minimal automatic-optimization loop with Lightning's
closure stand in for the libraries; random data."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Optimizer


class AdamW(Optimizer):
    """transformers.optimization.AdamW (4.31)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0, correct_bias=True):
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "correct_bias": correct_bias}
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()

        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                beta1, beta2 = group["betas"]
                state["step"] += 1
                exp_avg.mul_(beta1).add_(grad, alpha=(1.0 - beta1))
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
                denom = exp_avg_sq.sqrt().add_(group["eps"])
                step_size = group["lr"]
                if group["correct_bias"]:
                    bias_correction1 = 1.0 - beta1 ** state["step"]
                    bias_correction2 = 1.0 - beta2 ** state["step"]
                    step_size = step_size * math.sqrt(bias_correction2) / bias_correction1
                p.addcdiv_(exp_avg, denom, value=-step_size)
                if group["weight_decay"] > 0.0:
                    p.add_(p, alpha=(-group["lr"] * group["weight_decay"]))
        return loss


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 3))

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.encoder(x)
        return F.cross_entropy(logits, y)

    def configure_optimizers(self):
        return AdamW(self.parameters(), lr=2e-5, weight_decay=0.01)


class Closure:
    """Lightning's automatic-optimization closure: training_step, zero_grad, backward."""

    def __init__(self, model, optimizer, batch, batch_idx):
        self.model, self.optimizer, self.batch, self.batch_idx = model, optimizer, batch, batch_idx
        self.loss = None

    def __call__(self):
        self.loss = self.model.training_step(self.batch, self.batch_idx)
        self.optimizer.zero_grad()
        self.loss.backward()  # expect: GG104
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
