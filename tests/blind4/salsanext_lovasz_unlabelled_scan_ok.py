# Source: https://github.com/PRBonn/LiDAR-MOS/issues/56
"""LiDAR-MOS's SalsaNext trainer with the fix that fits the cause the bug program reproduces: a
range image without any labelled point gives no loss to learn from (the NLL term divides by a
zero weight sum and Lovasz_softmax returns an empty tensor), so train_epoch skips such scans and
loss_m is a scalar on every step it backwards. Lovasz_softmax and the trainer's loss follow the
repository; a two-conv network with a softmax stands in for SalsaNext, and random 5-channel range
images (the second one without labelled points) stand in for the scans."""
import torch
import torch.nn as nn


def isnan(x):
    return x != x


def mean(l, ignore_nan=False, empty=0):
    """nanmean compatible with generators."""
    l = iter(l)
    if ignore_nan:
        l = (x for x in l if not isnan(x))
    try:
        n = 1
        acc = next(l)
    except StopIteration:
        if empty == 'raise':
            raise ValueError('Empty mean')
        return empty
    for n, v in enumerate(l, 2):
        acc += v
    if n == 1:
        return acc
    return acc / n


def lovasz_grad(gt_sorted):
    """Computes gradient of the Lovasz extension w.r.t sorted errors"""
    p = len(gt_sorted)
    gts = gt_sorted.sum()
    intersection = gts - gt_sorted.float().cumsum(0)
    union = gts + (1 - gt_sorted).float().cumsum(0)
    jaccard = 1. - intersection / union
    if p > 1:  # cover 1-pixel case
        jaccard[1:p] = jaccard[1:p] - jaccard[0:-1]
    return jaccard


def lovasz_softmax(probas, labels, classes='present', per_image=False, ignore=None):
    if per_image:
        loss = mean(lovasz_softmax_flat(*flatten_probas(prob.unsqueeze(0), lab.unsqueeze(0), ignore), classes=classes)
                    for prob, lab in zip(probas, labels))
    else:
        loss = lovasz_softmax_flat(*flatten_probas(probas, labels, ignore), classes=classes)
    return loss


def lovasz_softmax_flat(probas, labels, classes='present'):
    if probas.numel() == 0:
        # only void pixels, the gradients should be 0
        return probas * 0.
    C = probas.size(1)
    losses = []
    class_to_sum = list(range(C)) if classes in ['all', 'present'] else classes
    for c in class_to_sum:
        fg = (labels == c).float()  # foreground for class c
        if (classes == 'present' and fg.sum() == 0):
            continue
        class_pred = probas[:, c]
        errors = (fg - class_pred).abs()
        errors_sorted, perm = torch.sort(errors, 0, descending=True)
        perm = perm.data
        fg_sorted = fg[perm]
        losses.append(torch.dot(errors_sorted, lovasz_grad(fg_sorted)))
    return mean(losses)


def flatten_probas(probas, labels, ignore=None):
    """Flattens predictions in the batch"""
    B, C, H, W = probas.size()
    probas = probas.permute(0, 2, 3, 1).contiguous().view(-1, C)  # B * H * W, C = P, C
    labels = labels.view(-1)
    if ignore is None:
        return probas, labels
    valid = (labels != ignore)
    vprobas = probas[valid.nonzero().squeeze()]
    vlabels = labels[valid]
    return vprobas, vlabels


class Lovasz_softmax(nn.Module):
    def __init__(self, classes='present', per_image=False, ignore=None):
        super(Lovasz_softmax, self).__init__()
        self.classes = classes
        self.per_image = per_image
        self.ignore = ignore

    def forward(self, probas, labels):
        return lovasz_softmax(probas, labels, self.classes, self.per_image, self.ignore)


class SalsaNext(nn.Module):
    """Stands in for SalsaNext: range image in, per-pixel class probabilities out."""

    def __init__(self, nclasses, in_channels=5):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(in_channels, 16, 3, padding=1), nn.LeakyReLU(),
                                  nn.Conv2d(16, nclasses, 1))

    def forward(self, x):
        return torch.softmax(self.body(x), dim=1), None


class Trainer:
    def __init__(self, nclasses=3):
        self.model = SalsaNext(nclasses)
        self.loss_w = torch.ones(nclasses)
        self.loss_w[0] = 0  # ignore the unlabelled class
        self.criterion = nn.NLLLoss(weight=self.loss_w.double())
        self.ls = Lovasz_softmax(ignore=0)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.n_gpus = 1

    def train_epoch(self, train_loader, model, criterion, optimizer, epoch):
        model.train()
        for i, (in_vol, proj_labels) in enumerate(train_loader):
            if not (proj_labels != 0).any():  # no labelled point in this scan: nothing to learn
                continue
            # compute output
            output, _ = model(in_vol)
            loss_m = criterion(torch.log(output.clamp(min=1e-8)).double(), proj_labels).float() + \
                self.ls(output, proj_labels.long())

            optimizer.zero_grad()
            if self.n_gpus > 1:
                idx = torch.ones(self.n_gpus)
                loss_m.backward(idx)
            else:
                loss_m.backward()
            optimizer.step()

            # measure accuracy and record loss
            loss = loss_m.mean()
            print('Epoch: [{0}][{1}/{2}] | Loss {loss:.4f}'.format(epoch, i, len(train_loader), loss=loss.item()))

    def train(self, train_loader, epochs=1):
        for epoch in range(epochs):
            self.train_epoch(train_loader, self.model, self.criterion, self.optimizer, epoch)


labelled = torch.randint(0, 3, (2, 8, 16))
unlabelled = torch.zeros(2, 8, 16, dtype=torch.long)  # a scan with no labelled point
train_loader = [(torch.randn(2, 5, 8, 16), labelled), (torch.randn(2, 5, 8, 16), unlabelled)]
Trainer().train(train_loader)
