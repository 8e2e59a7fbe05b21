# Source: https://github.com/hli2020/feature_intertwiner/issues/4
"""Feature Intertwiner's optimal-transport meta-loss with the fix given in the issue: the cosine
cost normalises the critic features out of place, x = x / (torch.norm(x, ...) + EPS), so the
critic's ReLU output and torch.norm's input stay as they were saved. The 1-D OptTrans (config
DEV.OT_ONE_DIM_FORM = 'conv') is kept; the detector is replaced by a small linear head producing
the "small" and "big" per-class features of the meta-loss (the big ones detached), with random
RoI features; .cuda() is left out."""
from types import SimpleNamespace

import torch
import torch.nn as nn
from torch.autograd import Variable

EPS = 1e-20


class OptTrans(nn.Module):
    def __init__(self, config, ch_x, epsilon=1., L=5, remove_bias=False, C_form='cosine', no_bp_P_L=True):
        super(OptTrans, self).__init__()
        self.config = config
        self.epsilon = 1./epsilon
        self.L = L
        self.remove_bias = remove_bias
        self.no_bp_P_L = no_bp_P_L
        self.C_form = C_form
        ch_y = ch_x
        self.G_net = nn.Sequential(*[nn.Conv1d(ch_x, ch_y, kernel_size=3, padding=1, stride=1), nn.ReLU()])
        if self.config.DEV.OT_ONE_DIM_FORM == 'conv':
            self.critic = nn.Sequential(*[nn.Conv1d(ch_y, int(ch_y/4), kernel_size=3, padding=1, stride=1), nn.ReLU()])

    def forward(self, x, y):
        x_upsample = self.G_net(x)
        if self.remove_bias:
            loss = self._basic_compute_loss(x_upsample, y)
        else:
            loss = 2*self._basic_compute_loss(x_upsample, y) \
                - self._basic_compute_loss(x_upsample, x_upsample) \
                - self._basic_compute_loss(y, y)
        return loss

    def _basic_compute_loss(self, x, y):
        bs = x.size(0)
        loss = []
        x = self.critic(x)
        x_all = x.view(bs, x.size(1), -1)
        y = self.critic(y)
        y_all = y.view(bs, y.size(1), -1)
        for i in range(bs):
            loss.append(self._sinkhorn_iterate(x_all[i].squeeze(dim=0), y_all[i].squeeze(dim=0)))
        return torch.stack(loss)

    def _sinkhorn_iterate(self, x, y):
        sample_num = x.size(0)
        if self.C_form == 'cosine':
            x = x / (torch.norm(x, p=2, dim=1, keepdim=True) + EPS)
            y = y / (torch.norm(y, p=2, dim=1, keepdim=True) + EPS)
            C = 1 - torch.mm(x, y.permute(1, 0))

        K = torch.exp(-self.epsilon*C)
        # Sinkhorn iterate
        b = Variable(torch.ones(sample_num, 1)*(1./sample_num), requires_grad=True)
        const = Variable(torch.ones(sample_num, 1)*(1./sample_num), requires_grad=False)
        for i in range(self.L):
            a = const / (torch.mm(K, b) + EPS)
            b = const / (torch.mm(K.permute(1, 0), a) + EPS)

        K = a*K*b.permute(1, 0)
        if self.no_bp_P_L:
            K = K.detach()
        basic_loss = torch.dot(K.view(-1), C.view(-1))
        return basic_loss


class MetaLossHead(nn.Module):
    """The part of the model the meta-loss trains: per-class features of small and big RoIs."""
    def __init__(self, config, in_ch=32, ch=32, num_classes=4):
        super().__init__()
        self.small_fc = nn.Linear(in_ch, ch)
        self.big_fc = nn.Linear(in_ch, ch)
        self.ot_loss = OptTrans(config, ch_x=ch)
        self.num_classes = num_classes

    def meta_loss(self, small_rois, big_rois, small_labels, big_labels):
        small_feat = torch.stack([self.small_fc(small_rois[small_labels == c]).mean(0) for c in range(self.num_classes)], 1)
        with torch.no_grad():  # the big-object feature buffer
            final_big_feat = torch.stack([self.big_fc(big_rois[big_labels == c]).mean(0) for c in range(self.num_classes)], 1)
        _idx = torch.arange(self.num_classes)
        SMALL = small_feat[:, _idx].t()
        BIG = Variable(final_big_feat)[:, _idx].t()
        loss = self.ot_loss(SMALL.unsqueeze(dim=-1), BIG.unsqueeze(dim=-1).contiguous())
        return loss


config = SimpleNamespace(DEV=SimpleNamespace(OT_ONE_DIM_FORM='conv', LOSS_CHOICE='ot'))
model = MetaLossHead(config)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for step in range(2):
    small_rois, big_rois = torch.randn(16, 32), torch.randn(16, 32)
    labels = torch.arange(16) % 4
    meta_loss = model.meta_loss(small_rois, big_rois, labels, labels).mean()
    optimizer.zero_grad()
    meta_loss.backward()
    optimizer.step()
