# Source: https://github.com/qubvel-org/segmentation_models.pytorch/pull/611
"""segmentation_models.pytorch's utils losses with the pull request's change: DiceLoss takes a
threshold and passes it to F.f_score, whose _threshold binarises the prediction with
(x > threshold).type(x.dtype). A comparison has no gradient, so the Dice loss of a training step
has no grad_fn ("element 0 of tensors does not require grad"). A two-layer conv net stands in for
the Unet, random masks for the dataset; TrainEpoch's step is inlined."""
import torch
import torch.nn as nn


def _threshold(x, threshold=None):
    if threshold is not None:
        return (x > threshold).type(x.dtype)
    else:
        return x


def f_score(pr, gt, beta=1, eps=1e-7, threshold=None, ignore_channels=None):
    pr = _threshold(pr, threshold=threshold)
    tp = torch.sum(gt * pr)
    fp = torch.sum(pr) - tp
    fn = torch.sum(gt) - tp
    score = ((1 + beta ** 2) * tp + eps) \
        / ((1 + beta ** 2) * tp + beta ** 2 * fn + fp + eps)
    return score


class DiceLoss(nn.Module):
    __name__ = "dice_loss"

    def __init__(self, eps=1., beta=1., activation=None, threshold=None, ignore_channels=None, **kwargs):
        super().__init__(**kwargs)
        self.eps = eps
        self.beta = beta
        self.threshold = threshold
        self.activation = nn.Sigmoid() if activation == "sigmoid" else nn.Identity()
        self.ignore_channels = ignore_channels

    def forward(self, y_pr, y_gt):
        y_pr = self.activation(y_pr)
        return 1 - f_score(
            y_pr, y_gt,
            beta=self.beta,
            eps=self.eps,
            threshold=self.threshold,
            ignore_channels=self.ignore_channels,
        )


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
loss = DiceLoss(activation="sigmoid", threshold=0.5)
optimizer = torch.optim.Adam(params=model.parameters(), lr=0.0001)

train_loader = [(torch.rand(2, 3, 16, 16), (torch.rand(2, 1, 16, 16) > 0.5).float()) for _ in range(2)]
for x, y in train_loader:
    optimizer.zero_grad()
    prediction = model.forward(x)
    loss_value = loss(prediction, y)
    loss_value.backward()  # expect: GG104
    optimizer.step()
    print(loss.__name__, loss_value.item())
