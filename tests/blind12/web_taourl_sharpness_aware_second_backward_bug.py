# Source: https://taourl.com/read-2673886.html
"""The article's cause of "Trying to backward through the graph a second time": `.backward()` is
called again on a loss whose graph the first backward freed, without recomputing the forward pass.
Here a two-step sharpness-aware update (an optimizer wrapper with first_step / second_step): the
training step backwards the loss, the wrapper moves the weights to the worst-case neighbour, and the
step then calls `loss.backward()` again on the same loss to get the gradient there. Fix from the
article: recompute the forward pass (the loss at the perturbed weights) before the second backward.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SharpnessAware(torch.optim.Optimizer):
    def __init__(self, params, base_cls, rho=0.05, **kwargs):
        super().__init__(params, dict(rho=rho, **kwargs))
        self.base = base_cls(self.param_groups, **kwargs)

    @torch.no_grad()
    def first_step(self):
        norm = torch.norm(torch.stack([p.grad.norm() for g in self.param_groups for p in g["params"] if p.grad is not None]))
        for group in self.param_groups:
            scale = group["rho"] / (norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                e = p.grad * scale
                p.add_(e)
                self.state[p]["e"] = e
        self.zero_grad()

    @torch.no_grad()
    def second_step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if "e" in self.state[p]:
                    p.sub_(self.state[p]["e"])
        self.base.step()
        self.zero_grad()


def train_step(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.first_step()
    loss.backward()  # expect: GG101
    opt.second_step()
    return loss.item()


model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
opt = SharpnessAware(model.parameters(), torch.optim.SGD, rho=0.05, lr=0.1)
for it in range(3):
    x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
    print(it, train_step(model, opt, x, y))
