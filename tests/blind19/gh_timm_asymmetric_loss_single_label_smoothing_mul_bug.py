# Source: https://github.com/huggingface/pytorch-image-models/pull/1500
"""timm's AsymmetricLossSingleLabel (timm/loss/asymmetric_loss.py before PR #1500) used
as the training criterion of a small image classifier.

The loss builds the one-hot `self.targets_classes` with scatter_, uses it as `targets`
in `xs_pos = xs_pos * targets` (mul saves `targets` to compute the gradient of
`xs_pos`), and then applies label smoothing in place:
`self.targets_classes.mul_(1 - self.eps).add_(self.eps / num_classes)`. That bumps the
version of the tensor `MulBackward0` saved, so `loss.backward()` in the training loop
raises "one of the variables needed for gradient computation has been modified by an
inplace operation".

The PR's fix (see the _ok twin): "Remove inplace operators when calculating the loss",
i.e. `self.targets_classes = self.targets_classes.mul(1 - self.eps).add(self.eps / num_classes)`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


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
        """"
        Parameters
        ----------
        x: input logits
        y: targets (1-hot vector)
        """

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


class SmallConvNet(nn.Module):
    """Stand-in for the timm model created by create_model()."""

    def __init__(self, num_classes=5):
        super().__init__()
        self.conv_stem = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.act1 = nn.ReLU(inplace=True)
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(8, num_classes)

    def forward_features(self, x):
        return self.act1(self.bn1(self.conv_stem(x)))

    def forward(self, x):
        x = self.forward_features(x)
        x = self.global_pool(x).flatten(1)
        return self.classifier(x)


def train_one_epoch(epoch, model, loader, optimizer, loss_fn):
    model.train()
    for batch_idx, (input, target) in enumerate(loader):
        output = model(input)
        loss = loss_fn(output, target)

        optimizer.zero_grad()
        loss.backward()  # expect: GG103
        optimizer.step()
        print(f"epoch {epoch} batch {batch_idx} loss {loss.item():.4f}")


def main():
    torch.manual_seed(0)
    model = SmallConvNet(num_classes=5)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    train_loss_fn = AsymmetricLossSingleLabel(gamma_pos=0, gamma_neg=4, eps=0.1)
    loader = [(torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))) for _ in range(3)]
    for epoch in range(2):
        train_one_epoch(epoch, model, loader, optimizer, train_loss_fn)


if __name__ == '__main__':
    main()
