# Source: https://github.com/amdegroot/ssd.pytorch/commit/c8d33e0c82d89797b7eedfc06ceb22763b3c0e9e
"""amdegroot/ssd.pytorch, layers/modules/l2norm.py before c8d33e0: `SSD.forward` runs the VGG base up
to conv4_3's `nn.ReLU(inplace=True)` and hands that activation to `L2Norm`, whose forward divides it in
place, `x /= norm`. The ReLU saved its output and `x.pow(2)` saved `x` for the backward, so the
training step's `loss.backward()` raises "one of the variables needed for gradient computation has
been modified by an inplace operation". Fix (the commit's): `x = torch.div(x, norm)`. The VGG config,
the extras, the prior boxes and MultiBoxLoss's matching are small stand-ins (a tiny base, 3 classes,
a smooth-L1 + cross-entropy over random targets); CPU, tiny images.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.init as init
import torch.optim as optim


# ---- layers/modules/l2norm.py ----
class L2Norm(nn.Module):
    def __init__(self, n_channels, scale):
        super(L2Norm, self).__init__()
        self.n_channels = n_channels
        self.gamma = scale or None
        self.eps = 1e-10
        self.weight = nn.Parameter(torch.Tensor(self.n_channels))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.gamma)

    def forward(self, x):
        norm = x.pow(2).sum(dim=1, keepdim=True).sqrt() + self.eps
        x /= norm
        out = self.weight.unsqueeze(0).unsqueeze(2).unsqueeze(3).expand_as(x) * x
        return out


# ---- ssd.py (a tiny base: the same builder functions, smaller configs) ----
def vgg(cfg, i, batch_norm=False):
    layers = []
    in_channels = i
    for v in cfg:
        if v == 'M':
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        elif v == 'C':
            layers += [nn.MaxPool2d(kernel_size=2, stride=2, ceil_mode=True)]
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            layers += [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    pool5 = nn.MaxPool2d(kernel_size=3, stride=1, padding=1)
    conv6 = nn.Conv2d(in_channels, 32, kernel_size=3, padding=6, dilation=6)
    conv7 = nn.Conv2d(32, 32, kernel_size=1)
    layers += [pool5, conv6, nn.ReLU(inplace=True), conv7, nn.ReLU(inplace=True)]
    return layers


def add_extras(cfg, i, batch_norm=False):
    layers = []
    in_channels = i
    flag = False
    for k, v in enumerate(cfg):
        if in_channels != 'S':
            if v == 'S':
                layers += [nn.Conv2d(in_channels, cfg[k + 1], kernel_size=(1, 3)[flag], stride=2, padding=1)]
            else:
                layers += [nn.Conv2d(in_channels, v, kernel_size=(1, 3)[flag])]
            flag = not flag
        in_channels = v
    return layers


def multibox(vgg, extra_layers, cfg, num_classes):
    loc_layers = []
    conf_layers = []
    vgg_source = [8, -2]
    for k, v in enumerate(vgg_source):
        loc_layers += [nn.Conv2d(vgg[v].out_channels, cfg[k] * 4, kernel_size=3, padding=1)]
        conf_layers += [nn.Conv2d(vgg[v].out_channels, cfg[k] * num_classes, kernel_size=3, padding=1)]
    for k, v in enumerate(extra_layers[1::2], 2):
        loc_layers += [nn.Conv2d(v.out_channels, cfg[k] * 4, kernel_size=3, padding=1)]
        conf_layers += [nn.Conv2d(v.out_channels, cfg[k] * num_classes, kernel_size=3, padding=1)]
    return vgg, extra_layers, (loc_layers, conf_layers)


base = [8, 'M', 16, 'M', 16, 16]          # conv4_3's ReLU is vgg[9]
extras = [16, 'S', 16]
mbox = [4, 6, 6]


class SSD(nn.Module):
    def __init__(self, phase, size, base, extras, head, num_classes):
        super(SSD, self).__init__()
        self.phase = phase
        self.num_classes = num_classes
        self.size = size
        self.vgg = nn.ModuleList(base)
        # Layer learns to scale the l2 normalized features from conv4_3
        self.L2Norm = L2Norm(16, 20)
        self.extras = nn.ModuleList(extras)
        self.loc = nn.ModuleList(head[0])
        self.conf = nn.ModuleList(head[1])

    def forward(self, x):
        sources = list()
        loc = list()
        conf = list()

        # apply vgg up to conv4_3 relu
        for k in range(10):
            x = self.vgg[k](x)

        s = self.L2Norm(x)
        sources.append(s)

        # apply vgg up to fc7
        for k in range(10, len(self.vgg)):
            x = self.vgg[k](x)
        sources.append(x)

        # apply extra layers and cache source layer outputs
        for k, v in enumerate(self.extras):
            x = F.relu(v(x), inplace=True)
            if k % 2 == 1:
                sources.append(x)

        # apply multibox head to source layers
        for (x, l, c) in zip(sources, self.loc, self.conf):
            loc.append(l(x).permute(0, 2, 3, 1).contiguous())
            conf.append(c(x).permute(0, 2, 3, 1).contiguous())

        loc = torch.cat([o.view(o.size(0), -1) for o in loc], 1)
        conf = torch.cat([o.view(o.size(0), -1) for o in conf], 1)
        output = (
            loc.view(loc.size(0), -1, 4),
            conf.view(conf.size(0), -1, self.num_classes),
        )
        return output


def build_ssd(phase, size=32, num_classes=3):
    base_, extras_, head_ = multibox(vgg(base, 3), add_extras(extras, 32), mbox, num_classes)
    return SSD(phase, size, base_, extras_, head_, num_classes)


# ---- layers/modules/multibox_loss.py (stand-in: targets already matched to the priors) ----
class MultiBoxLoss(nn.Module):
    def __init__(self, num_classes):
        super(MultiBoxLoss, self).__init__()
        self.num_classes = num_classes

    def forward(self, predictions, targets):
        loc_data, conf_data = predictions
        loc_t, conf_t = targets
        pos = conf_t > 0
        loss_l = F.smooth_l1_loss(loc_data[pos], loc_t[pos], reduction='sum')
        loss_c = F.cross_entropy(conf_data.view(-1, self.num_classes), conf_t.view(-1), reduction='sum')
        N = pos.sum().clamp(min=1).float()
        return loss_l / N, loss_c / N


# ---- train.py ----
def train():
    ssd_net = build_ssd('train', 32, 3)
    net = ssd_net
    optimizer = optim.SGD(net.parameters(), lr=1e-3, momentum=0.9, weight_decay=5e-4)
    criterion = MultiBoxLoss(3)
    net.train()
    for iteration in range(2):
        images = torch.randn(2, 3, 32, 32)
        with torch.no_grad():
            n_priors = net(images)[0].size(1)
        targets = (torch.randn(2, n_priors, 4), torch.randint(0, 3, (2, n_priors)))
        # forward
        out = net(images)
        # backprop
        optimizer.zero_grad()
        loss_l, loss_c = criterion(out, targets)
        loss = loss_l + loss_c
        loss.backward()  # expect: GG103
        optimizer.step()
        print('iter ' + repr(iteration) + ' || Loss: %.4f ||' % (loss.item()))


if __name__ == '__main__':
    torch.manual_seed(0)
    train()
