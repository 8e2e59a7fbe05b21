# Source: https://blog.youkuaiyun.com/InitPulse/article/details/154123221
"""The post "why does your loss.backward() raise?" on backward's `grad_tensors` argument, applied:
the two-head multi-task model's criterion still returns the stacked per-task losses (a vector of 2),
and the training step passes the task weights as the upstream gradient, `losses.backward(task_weights)`,
which backwards the weighted sum of the task losses.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiTaskNet(nn.Module):
    def __init__(self, n_in, n_cls):
        super().__init__()
        self.shared = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU())
        self.cls_head = nn.Linear(32, n_cls)
        self.reg_head = nn.Linear(32, 1)

    def forward(self, x):
        h = self.shared(x)
        return {"cls": self.cls_head(h), "reg": self.reg_head(h).squeeze(-1)}


class MultiTaskCriterion:
    def __call__(self, out, batch):
        task_losses = [
            F.cross_entropy(out["cls"], batch["label"]),
            F.mse_loss(out["reg"], batch["value"]),
        ]
        return torch.stack(task_losses)


def train_step(model, criterion, optimizer, batch, task_weights):
    optimizer.zero_grad()
    losses = criterion(model(batch["x"]), batch)
    losses.backward(task_weights)
    optimizer.step()
    return (losses.detach() * task_weights).sum().item()


model = MultiTaskNet(8, 4)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
task_weights = torch.tensor([1.0, 0.5])
for step in range(3):
    batch = {"x": torch.randn(16, 8), "label": torch.randint(0, 4, (16,)), "value": torch.randn(16)}
    print(step, train_step(model, MultiTaskCriterion(), optimizer, batch, task_weights))
