# Source: https://github.com/huggingface/pytorch-image-models/commit/39190f5f
"""timm's `AsymmetricLossSingleLabel` (the fixing commit's parent): the one-hot targets kept on
`self.targets_classes` are multiplied into `xs_pos = xs_pos * targets` (mul saves `targets`), then the
label smoothing rewrites the same tensor in place, `self.targets_classes.mul_(1 - eps).add_(eps / C)`.
`loss.backward()` raises "one of the variables needed for gradient computation has been modified by an
inplace operation". The commit's fix: smooth out of place, `self.targets_classes.mul(1 - eps).add(eps / C)`.
A small classifier trained with the loss on random data, CPU.
"""
import torch
import torch.nn as nn


class AsymmetricLossSingleLabel(nn.Module):
    def __init__(self, gamma_pos=1, gamma_neg=4, eps: float = 0.1, reduction='mean'):
        super(AsymmetricLossSingleLabel, self).__init__()

        self.eps = eps
        self.logsoftmax = nn.LogSoftmax(dim=-1)
        self.targets_classes = []  # prevent gpu repeated memory allocation
        self.gamma_pos = gamma_pos
        self.gamma_neg = gamma_neg
        self.reduction = reduction

    def forward(self, inputs, target, reduction=None):
        num_classes = inputs.size()[-1]
        log_preds = self.logsoftmax(inputs)
        self.targets_classes = torch.zeros_like(inputs).scatter_(1, target.long().unsqueeze(1), 1)

        # ASL weights
        targets = self.targets_classes
        anti_targets = 1 - targets
        xs_pos = torch.exp(log_preds)
        xs_neg = 1 - xs_pos
        xs_pos = xs_pos * targets
        xs_neg = xs_neg * anti_targets
        asymmetric_w = torch.pow(1 - xs_pos - xs_neg,
                                 self.gamma_pos * targets + self.gamma_neg * anti_targets)
        log_preds = log_preds * asymmetric_w

        if self.eps > 0:  # label smoothing
            self.targets_classes.mul_(1 - self.eps).add_(self.eps / num_classes)

        # loss calculation
        loss = - self.targets_classes.mul(log_preds)

        loss = loss.sum(dim=-1)
        if self.reduction == 'mean':
            loss = loss.mean()

        return loss


class Classifier(nn.Module):
    def __init__(self, in_dim=12, num_classes=5):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(in_dim, 32), nn.ReLU())
        self.head = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.head(self.features(x))


def train_one_epoch(model, loader, loss_fn, optimizer):
    model.train()
    for inputs, target in loader:
        output = model(inputs)
        loss = loss_fn(output, target)
        optimizer.zero_grad()
        loss.backward()  # expect: GG103
        optimizer.step()
    return loss.item()


model = Classifier()
train_loss_fn = AsymmetricLossSingleLabel(gamma_pos=0, gamma_neg=4, eps=0.1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loader = [(torch.randn(8, 12), torch.randint(0, 5, (8,))) for _ in range(3)]
for epoch in range(2):
    print(epoch, train_one_epoch(model, loader, train_loss_fn, optimizer))
