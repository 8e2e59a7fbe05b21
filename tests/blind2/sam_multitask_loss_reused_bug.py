# Source: https://github.com/davda54/sam/issues/10
"""A commenter's multi-task training step with the SAM optimizer: loss = 0 is set once, the first
pass sums the per-task losses into it and backwards it, first_step() perturbs the weights, then
the second pass adds the new per-task losses onto the same `loss` and backwards it again. The sum
still holds the first pass's terms, whose graph the first backward freed. Small CheXpert-style
model (one logit per task plus a logit map), random images."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = self._grad_norm()
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                self.state[p]["old_p"] = p.data.clone()
                p.add_(p.grad * scale.to(p))  # climb to the local maximum "w + e(w)"
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.data = self.state[p]["old_p"]  # get back to "w" from "w + e(w)"
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()

    def _grad_norm(self):
        return torch.norm(torch.stack([p.grad.norm(p=2) for group in self.param_groups
                                       for p in group["params"] if p.grad is not None]), p=2)


class Classifier(nn.Module):
    def __init__(self, num_tasks):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU())
        self.heads = nn.ModuleList([nn.Conv2d(4, 1, 1) for _ in range(num_tasks)])

    def forward(self, x):
        feat = self.backbone(x)
        logit_maps = [head(feat) for head in self.heads]
        logits = [m.mean(dim=(2, 3)).squeeze(1) for m in logit_maps]
        return logits, logit_maps


def get_loss(output, target, index, device, cfg):
    target = target[:, index].to(device)
    loss = F.binary_cross_entropy_with_logits(output[index], target)
    acc = ((output[index] > 0).float() == target).float().mean()
    return loss, acc


num_tasks, device, cfg = 3, torch.device("cpu"), None
model = Classifier(num_tasks)
optimizer = SAM(model.parameters(), torch.optim.SGD, lr=0.1, momentum=0.9)
loss_sum = torch.zeros(num_tasks)
acc_sum = torch.zeros(num_tasks)

for step in range(2):
    image = torch.randn(4, 1, 8, 8)
    target = torch.randint(0, 2, (4, num_tasks)).float()

    output, logit_map = model(image)

    loss = 0
    for t in range(num_tasks):
        loss_t, acc_t = get_loss(output, target, t, device, cfg)
        loss += loss_t
        loss_sum[t] += loss_t.item()
        acc_sum[t] += acc_t.item()

    optimizer.zero_grad()
    loss.backward()
    optimizer.first_step(zero_grad=True)
    output, logit_map = model(image)

    for t in range(num_tasks):
        loss_t, acc_t = get_loss(output, target, t, device, cfg)
        loss += loss_t
        loss_sum[t] += loss_t.item()
        acc_sum[t] += acc_t.item()
    loss.backward()  # expect: GG101
    optimizer.second_step(zero_grad=True)
