# Source: https://github.com/kozistr/pytorch_optimizer/issues/64
"""pytorch_optimizer's SAM in an active-learning trainer, fixed as the SAM README does it: the
first backward is the loss at w; after `first_step` moves the weights in place to w + e(w), a
second forward computes a new loss there, and that loss (not the one computed before the step,
whose graph saved the weights the step changed) is backwarded before `second_step`. The
backbone, SAM (first_step/second_step) and the loop follow the report, small, on random images."""
import torch
import torch.nn as nn


class SAM(torch.optim.Optimizer):
    """Stand-in for pytorch_optimizer.SAM: ascend to w + e(w), then step the base optimizer from w."""

    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super(SAM, self).__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = torch.norm(torch.stack([p.grad.norm(p=2) for group in self.param_groups
                                            for p in group["params"] if p.grad is not None]), p=2)
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                e_w = p.grad * scale
                p.add_(e_w)
                self.state[p]["e_w"] = e_w
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None or "e_w" not in self.state[p]:
                    continue
                p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()


class ResNetLike(nn.Module):
    def __init__(self, num_classes=100):
        super(ResNetLike, self).__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.linear = nn.Linear(16, num_classes)

    def forward(self, x):
        out = self.features(x)
        return self.linear(out), out


torch.manual_seed(0)
models = {'backbone': ResNetLike()}
criterion = nn.CrossEntropyLoss()
optimizers = {'backbone': SAM(models['backbone'].parameters(), torch.optim.SGD, lr=0.1, momentum=0.9)}
dataloader = [(torch.randn(4, 3, 8, 8), torch.randint(0, 100, (4,))) for _ in range(2)]
for inputs, labels in dataloader:
    optimizers['backbone'].zero_grad()
    scores, features = models['backbone'](inputs)
    loss = criterion(scores, labels)
    # -----------------SAM Optimizer -------------------
    loss.backward()
    optimizers['backbone'].first_step(zero_grad=True)

    loss_at_perturbed = criterion(models['backbone'](inputs)[0], labels)
    loss_at_perturbed.backward()
    optimizers['backbone'].second_step(zero_grad=True)
    print(loss.item())
