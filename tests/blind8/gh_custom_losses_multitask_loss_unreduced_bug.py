# Source: https://github.com/ywatanabe1989/custom_losses_pytorch/issues/3
"""custom_losses_pytorch's MultiTaskLoss (multi_task_loss.py, uncertainty weighting with learned
log-variances) used as its usage note shows, in the reporter's three-task training loop: the
per-task losses are stacked and weighted, and the module's default reduction='none' returns the
three weighted losses as a vector. Backwarding it raises "grad can be implicitly created only for
scalar outputs"; the author's answer is multitaskloss.mean().backward(). The reporter's network
(screenshots in the thread) is a small shared trunk with two regression heads and one
classification head here, on random batches."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiTaskLoss(torch.nn.Module):
    def __init__(self, is_regression, reduction='none'):
        super(MultiTaskLoss, self).__init__()
        self.is_regression = is_regression
        self.n_tasks = len(is_regression)
        self.log_vars = torch.nn.Parameter(torch.zeros(self.n_tasks))
        self.reduction = reduction

    def forward(self, losses):
        dtype = losses.dtype
        device = losses.device
        stds = (torch.exp(self.log_vars) ** (1 / 2)).to(device).to(dtype)
        self.is_regression = self.is_regression.to(device).to(dtype)
        coeffs = 1 / ((self.is_regression + 1) * (stds ** 2))
        multi_task_losses = coeffs * losses + torch.log(stds)

        if self.reduction == 'sum':
            multi_task_losses = multi_task_losses.sum()
        if self.reduction == 'mean':
            multi_task_losses = multi_task_losses.mean()

        return multi_task_losses


class MultiHeadNet(nn.Module):
    def __init__(self, in_features=10, hidden=16, n_classes=3):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU())
        self.head0 = nn.Linear(hidden, 1)
        self.head1 = nn.Linear(hidden, 1)
        self.head2 = nn.Linear(hidden, n_classes)

    def forward(self, x):
        h = self.trunk(x)
        return self.head0(h).squeeze(-1), self.head1(h).squeeze(-1), self.head2(h)


is_regression = torch.Tensor([True, True, False])  # True: Regression/MeanSquaredErrorLoss, False: Classification/CrossEntropyLoss
multitaskloss_instance = MultiTaskLoss(is_regression)
model = MultiHeadNet()

params = list(model.parameters()) + list(multitaskloss_instance.parameters())
optimizer = torch.optim.Adam(params, lr=1e-3)

model.train()
multitaskloss_instance.train()
for step in range(3):
    x = torch.randn(8, 10)
    y0, y1, y2 = torch.randn(8), torch.randn(8), torch.randint(0, 3, (8,))
    out0, out1, out2 = model(x)
    loss0 = F.mse_loss(out0, y0)
    loss1 = F.mse_loss(out1, y1)
    loss2 = F.cross_entropy(out2, y2)

    losses = torch.stack([loss0, loss1, loss2])
    multitaskloss = multitaskloss_instance(losses)

    optimizer.zero_grad()
    multitaskloss.backward()  # expect: GG105
    optimizer.step()
    print(step, multitaskloss.detach())
