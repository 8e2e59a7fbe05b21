# Source: https://github.com/wutong16/DistributionBalancedLoss/issues/20
"""Multi-label training with the Distribution-Balanced loss (ResampleLoss, use_sigmoid=True,
rebalance weighting, focal term, logit regularisation), with the classifier returning raw logits
as the loss expects (it applies the sigmoid itself): logit_reg_functions' `logits += self.neg_bias`
now writes into the last Linear's output, which no backward needs. Random class frequencies
stand in for class_freq.pkl."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def binary_cross_entropy(pred, label, weight=None, reduction='mean', avg_factor=None):
    if weight is not None:
        weight = weight.float()
    loss = F.binary_cross_entropy_with_logits(pred, label.float(), weight, reduction='none')
    if reduction == 'mean':
        loss = loss.mean()
    elif reduction == 'sum':
        loss = loss.sum()
    return loss


class ResampleLoss(nn.Module):

    def __init__(self, class_freq, neg_class_freq, use_sigmoid=True, reduction='mean', loss_weight=1.0,
                 focal=dict(focal=True, balance_param=2.0, gamma=2),
                 map_param=dict(alpha=10.0, beta=0.2, gamma=0.1),
                 logit_reg=dict(neg_scale=5.0, neg_bias=0.1),
                 reweight_func='rebalance'):
        super(ResampleLoss, self).__init__()
        self.use_sigmoid = use_sigmoid
        self.loss_weight = loss_weight
        self.reduction = reduction
        self.cls_criterion = binary_cross_entropy
        self.reweight_func = reweight_func

        # focal loss params
        self.focal = focal['focal']
        self.gamma = focal['gamma']
        self.balance_param = focal['balance_param']

        # mapping function params
        self.map_alpha = map_param['alpha']
        self.map_beta = map_param['beta']
        self.map_gamma = map_param['gamma']

        self.class_freq = class_freq
        self.neg_class_freq = neg_class_freq
        self.num_classes = self.class_freq.shape[0]
        self.train_num = self.class_freq[0] + self.neg_class_freq[0]
        # regularization params
        self.logit_reg = logit_reg
        self.neg_scale = logit_reg['neg_scale'] if 'neg_scale' in logit_reg else 1.0
        neg_bias = logit_reg['neg_bias'] if 'neg_bias' in logit_reg else 0.0
        self.neg_bias = - torch.log(self.train_num / self.class_freq - 1) * neg_bias / self.neg_scale

        self.freq_inv = torch.ones(self.class_freq.shape) / self.class_freq

    def forward(self, cls_score, label, weight=None, avg_factor=None, reduction_override=None):
        reduction = reduction_override if reduction_override else self.reduction

        weight = self.rebalance_weight(label.float())

        cls_score, weight = self.logit_reg_functions(label.float(), cls_score, weight)

        if self.focal:
            logpt = - self.cls_criterion(cls_score.clone(), label, weight=None, reduction='none')
            # pt is sigmoid(logit) for pos or sigmoid(-logit) for neg
            pt = torch.exp(logpt)
            loss = self.cls_criterion(cls_score, label.float(), weight=weight, reduction='none')
            loss = ((1 - pt) ** self.gamma) * loss
            loss = self.balance_param * loss
        else:
            loss = self.cls_criterion(cls_score, label.float(), weight, reduction=reduction)

        loss = self.loss_weight * loss
        return loss

    def logit_reg_functions(self, labels, logits, weight=None):
        if not self.logit_reg:
            return logits, weight
        if 'neg_bias' in self.logit_reg:
            logits += self.neg_bias
        if 'neg_scale' in self.logit_reg:
            logits = logits * (1 - labels) * self.neg_scale + logits * labels
            weight = weight / self.neg_scale * (1 - labels) + weight * labels
        return logits, weight

    def rebalance_weight(self, gt_labels):
        repeat_rate = torch.sum(gt_labels.float() * self.freq_inv, dim=1, keepdim=True)
        pos_weight = self.freq_inv.clone().detach().unsqueeze(0) / repeat_rate
        # pos and neg are equally treated
        weight = torch.sigmoid(self.map_beta * (pos_weight - self.map_gamma)) + self.map_alpha
        return weight


class MultiLabelNet(nn.Module):
    def __init__(self, in_dim=32, num_classes=10):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(in_dim, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x):
        return self.fc(self.backbone(x))


num_classes, train_num = 10, 500
class_freq = torch.randint(5, 200, (num_classes,)).float()
loss_func = ResampleLoss(class_freq, train_num - class_freq)
model = MultiLabelNet(num_classes=num_classes)
optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
for epoch in range(2):
    inputs = torch.randn(8, 32)
    labels = (torch.rand(8, num_classes) < 0.3).float()
    labels[:, 0] = 1
    outputs = model(inputs)
    loss = loss_func(outputs, labels).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
