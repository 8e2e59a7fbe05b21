# Source: https://github.com/EasonApolo/mstn/issues/7
"""MSTN domain adaptation (the repository's train.py and model.py), fixed: the loop stepped the
discriminator's optimizer between `D_loss.backward(retain_graph=True)` and `F_loss.backward(...)`,
whose `G_loss = -D_loss` term goes back through D, so the step's in-place update of D's weights
broke the second backward ("modified by an inplace operation"). The thread has no answer; the fix
takes both gradients before either step, each backward restricted (`inputs=`) to the parameters
of its own optimizer, as the original meant (it zeroed the other side's gradients anyway), then
steps both. Small: a reduced AlexNet with the repository's LRN, 99x99 random "Office" batches,
5 classes; no pretrained weights, logs or checkpoints."""
import argparse
import itertools
import math
from itertools import chain

import torch
import torch.nn as nn


class LRN(nn.Module):
    def __init__(self, local_size=1, alpha=1.0, beta=0.75, ACROSS_CHANNELS=True):
        super(LRN, self).__init__()
        self.ACROSS_CHANNELS = ACROSS_CHANNELS
        if ACROSS_CHANNELS:
            self.average = nn.AvgPool3d(kernel_size=(local_size, 1, 1), stride=1,
                                        padding=(int((local_size - 1.0) / 2), 0, 0))
        else:
            self.average = nn.AvgPool2d(kernel_size=local_size, stride=1, padding=int((local_size - 1.0) / 2))
        self.alpha = alpha
        self.beta = beta

    def forward(self, x):
        if self.ACROSS_CHANNELS:
            div = x.pow(2).unsqueeze(1)
            div = self.average(div).squeeze(1)
            div = div.mul(self.alpha).add(1.0).pow(self.beta)
        else:
            div = x.pow(2)
            div = self.average(div)
            div = div.mul(self.alpha).add(1.0).pow(self.beta)
        x = x.div(div)
        return x


def truncated_normal_(tensor, mean=0, std=0.01):
    size = tensor.shape
    tmp = tensor.new_empty(size + (4,)).normal_()
    valid = (tmp < 2) & (tmp > -2)
    ind = valid.max(-1, keepdim=True)[1]
    tensor.data.copy_(tmp.gather(-1, ind).squeeze(-1))
    tensor.data.mul_(std).add_(mean)


class AlexNet(nn.Module):

    def __init__(self, cudable, n_class, dim=32):
        super(AlexNet, self).__init__()
        self.cudable = cudable
        self.n_class = n_class
        self.decay = 0.3
        self.s_centroid = torch.zeros(self.n_class, dim)
        self.t_centroid = torch.zeros(self.n_class, dim)
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 11, stride=4),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, stride=2),
            LRN(local_size=5, alpha=1e-4, beta=0.75),
            nn.Conv2d(8, 16, 5, stride=1, padding=2, groups=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, stride=2),
            LRN(local_size=5, alpha=1e-4, beta=0.75),
            nn.Conv2d(16, 24, 3, stride=1, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(24, 24, 3, stride=1, padding=1, groups=2),
            nn.ReLU(inplace=True),
            nn.Conv2d(24, 16, 3, stride=1, padding=1, groups=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, stride=2)
        )
        self.classifier = nn.Sequential(
            nn.Linear(2 * 2 * 16, 64),
            nn.ReLU(inplace=True),
            nn.Dropout(),
            nn.Linear(64, 64),
            nn.ReLU(inplace=True),
            nn.Dropout(),
        )
        self.fc8 = nn.Sequential(nn.Linear(64, dim))
        self.fc9 = nn.Sequential(nn.Linear(dim, self.n_class))
        self.softmax = nn.Softmax(dim=0)
        self.D = nn.Sequential(
            nn.Linear(dim, 64),
            nn.ReLU(inplace=True),
            nn.Dropout(),
            nn.Linear(64, 64),
            nn.ReLU(inplace=True),
            nn.Dropout(),
            nn.Linear(64, 1)
        )
        self.init()

    def init(self):
        self.init_linear(self.fc8[0])
        self.init_linear(self.fc9[0], std=0.005)
        self.init_linear(self.D[0], D=True)
        self.init_linear(self.D[3], D=True)
        self.init_linear(self.D[6], D=True, std=0.3)
        self.CEloss, self.MSEloss, self.BCEloss = nn.CrossEntropyLoss(), nn.MSELoss(), nn.BCEWithLogitsLoss(reduction='mean')

    def init_linear(self, m, std=0.01, D=False):
        truncated_normal_(m.weight.data, 0, std)
        if D:
            m.bias.data.fill_(0)
        else:
            m.bias.data.fill_(0.1)

    def forward(self, x, training=True):
        conv_out = self.features(x)
        flattened = conv_out.view(conv_out.size(0), -1)
        dense_out = self.classifier(flattened)
        feature = self.fc8(dense_out)
        score = self.fc9(feature)
        pred = self.softmax(score)
        return feature, score, pred

    def forward_D(self, feature):
        logit = self.D(feature)
        return logit

    def closs(self, y_pred, y):
        C_loss = self.CEloss(y_pred, y)
        return C_loss

    def adloss(self, s_logits, t_logits, s_feature, t_feature, y_s, y_t):
        n, d = s_feature.shape
        s_labels, t_labels = y_s, torch.max(y_t, 1)[1]
        ones = torch.ones_like(s_labels, dtype=torch.float)
        zeros = torch.zeros(self.n_class)
        s_n_classes = zeros.scatter_add(0, s_labels, ones)
        t_n_classes = zeros.scatter_add(0, t_labels, ones)
        ones = torch.ones_like(s_n_classes)
        s_n_classes = torch.max(s_n_classes, ones)
        t_n_classes = torch.max(t_n_classes, ones)
        zeros = torch.zeros(self.n_class, d)
        s_sum_feature = zeros.scatter_add(0, torch.transpose(s_labels.repeat(d, 1), 1, 0), s_feature)
        t_sum_feature = zeros.scatter_add(0, torch.transpose(t_labels.repeat(d, 1), 1, 0), t_feature)
        current_s_centroid = torch.div(s_sum_feature, s_n_classes.view(self.n_class, 1))
        current_t_centroid = torch.div(t_sum_feature, t_n_classes.view(self.n_class, 1))
        decay = self.decay
        s_centroid = (1 - decay) * self.s_centroid + decay * current_s_centroid
        t_centroid = (1 - decay) * self.t_centroid + decay * current_t_centroid
        semantic_loss = self.MSEloss(s_centroid, t_centroid)
        self.s_centroid = s_centroid.detach()
        self.t_centroid = t_centroid.detach()
        D_real_loss = self.BCEloss(t_logits, torch.ones_like(t_logits))
        D_fake_loss = self.BCEloss(s_logits, torch.zeros_like(s_logits))
        D_loss = (D_real_loss + D_fake_loss) * 0.1
        G_loss = -D_loss
        return G_loss, D_loss, semantic_loss

    def regloss(self):
        Dregloss = [torch.sum(layer.weight ** 2) / 2 for layer in self.D if type(layer) == nn.Linear]
        layers = chain(self.features, self.classifier, self.fc8, self.fc9)
        Gregloss = [torch.sum(layer.weight ** 2) / 2 for layer in layers if type(layer) == nn.Conv2d or type(layer) == nn.Linear]
        mean = lambda x: 0.0005 * torch.mean(torch.stack(x))
        return mean(Dregloss), mean(Gregloss)

    def get_optimizer(self, init_lr, lr_mult, lr_mult_D):
        w_finetune, b_finetune, w_train, b_train, w_D, b_D = [], [], [], [], [], []
        finetune_layers = itertools.chain(self.features, self.classifier)
        train_layers = itertools.chain(self.fc8, self.fc9)
        for layer in finetune_layers:
            if type(layer) == nn.Conv2d or type(layer) == nn.Linear:
                w_finetune.append(layer.weight)
                b_finetune.append(layer.bias)
        for layer in train_layers:
            if type(layer) == nn.Linear:
                w_train.append(layer.weight)
                b_train.append(layer.bias)
        for layer in self.D:
            if type(layer) == nn.Linear:
                w_D.append(layer.weight)
                b_D.append(layer.bias)
        opt = torch.optim.SGD([{'params': w_finetune, 'lr': init_lr * lr_mult[0]},
                               {'params': b_finetune, 'lr': init_lr * lr_mult[1]},
                               {'params': w_train, 'lr': init_lr * lr_mult[2]},
                               {'params': b_train, 'lr': init_lr * lr_mult[3]}],
                              lr=init_lr, momentum=0.9)
        opt_D = torch.optim.SGD([{'params': w_D, 'lr': init_lr * lr_mult_D[0]},
                                 {'params': b_D, 'lr': init_lr * lr_mult_D[1]}],
                                lr=init_lr, momentum=0.9)
        return opt, opt_D


def lr_schedule(opt, epoch, mult):
    lr = init_lr / pow(1 + 0.001 * epoch, 0.75)
    for ind, param_group in enumerate(opt.param_groups):
        param_group['lr'] = lr * mult[ind]
    return lr


def adaptation_factor(x):
    if x >= 1.0:
        return 1.0
    den = 1.0 + math.exp(-10 * x)
    lamb = 2.0 / den - 1.0
    return lamb


def office_batches(n_batches, batch_size, n_class):
    return iter([(torch.randn(batch_size, 3, 99, 99), torch.randint(0, n_class, (batch_size,)))
                 for _ in range(n_batches)])


parser = argparse.ArgumentParser()
parser.add_argument('--da', default=1, type=int)
args = parser.parse_args([])
da = args.da
cuda = False

init_lr = 1e-2
batch_size = 8
max_epoch = 10000
lr_mult = [0.1, 0.2, 1, 2]
lr_mult_D = [1, 2]
n_class = 5

torch.manual_seed(0)
model = AlexNet(cudable=cuda, n_class=n_class)
opt, opt_D = model.get_optimizer(init_lr, lr_mult, lr_mult_D)
s_loader_epoch = office_batches(3, batch_size, n_class)
t_loader_epoch = office_batches(3, batch_size, n_class)

for epoch in range(0, 3):
    model.train()
    lamb = adaptation_factor(epoch * 1.0 / max_epoch)
    current_lr, _ = lr_schedule(opt, epoch, lr_mult), lr_schedule(opt_D, epoch, lr_mult_D)
    xs, ys = next(s_loader_epoch)
    xt, yt = next(t_loader_epoch)

    s_feature, s_score, s_pred = model.forward(xs)
    t_feature, t_score, t_pred = model.forward(xt)
    C_loss = model.closs(s_score, ys)
    if da:
        s_logit, t_logit = model.forward_D(s_feature), model.forward_D(t_feature)
        G_loss, D_loss, semantic_loss = model.adloss(s_logit, t_logit, s_feature, t_feature, ys, t_pred)
        Dregloss, Gregloss = model.regloss()
        F_loss = C_loss + Gregloss + lamb * G_loss + lamb * semantic_loss
        D_loss = D_loss + Dregloss

        d_params = [p for group in opt_D.param_groups for p in group['params']]
        f_params = [p for group in opt.param_groups for p in group['params']]
        opt_D.zero_grad()
        D_loss.backward(retain_graph=True, inputs=d_params)
        opt.zero_grad()
        F_loss.backward(inputs=f_params)
        opt_D.step()
        opt.step()
    else:
        opt.zero_grad()
        C_loss.backward()
        opt.step()
    print('epoch: {}, lr: {}, C_loss: {}'.format(epoch, current_lr, C_loss.item()))
