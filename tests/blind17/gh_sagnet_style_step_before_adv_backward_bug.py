# Source: https://github.com/hyseob/SagNet/issues/3
"""SagNet (style-agnostic networks, train.py with `--sagnet`): each step backwards the style loss
with `retain_graph=True`, steps `optimizer_style` (the style network and its classifier), then
backwards the adversarial loss `loss_adv` through the same `y_style` graph. The style step has
rewritten the style-branch weights that the graph saved, so `loss_adv.backward(retain_graph=True)`
raises "one of the variables needed for gradient computation has been modified by an inplace
operation" (the reporters saw it with torch >= 1.5; one thread answer: downgrade torch). Fix: take
every gradient first and step the optimizers after the last backward. The ResNet keeps its
structure at tiny widths; the PACS loaders are random images; DataParallel and `.cuda()` are dropped.
"""
import torch
import torch.nn as nn
import torch.optim as optim


# ---- modules/randomizations.py ----
class StyleRandomization(nn.Module):
    def __init__(self, eps=1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        N, C, H, W = x.size()
        if self.training:
            x = x.view(N, C, -1)
            mean = x.mean(-1, keepdim=True)
            var = x.var(-1, keepdim=True)
            x = (x - mean) / (var + self.eps).sqrt()
            idx_swap = torch.randperm(N)
            alpha = torch.rand(N, 1, 1)
            mean = alpha * mean + (1 - alpha) * mean[idx_swap]
            var = alpha * var + (1 - alpha) * var[idx_swap]
            x = x * (var + self.eps).sqrt() + mean
            x = x.view(N, C, H, W)
        return x


class ContentRandomization(nn.Module):
    def __init__(self, eps=1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        N, C, H, W = x.size()
        if self.training:
            x = x.view(N, C, -1)
            mean = x.mean(-1, keepdim=True)
            var = x.var(-1, keepdim=True)
            x = (x - mean) / (var + self.eps).sqrt()
            idx_swap = torch.randperm(N)
            x = x[idx_swap].detach()
            x = x * (var + self.eps).sqrt() + mean
            x = x.view(N, C, H, W)
        return x


# ---- modules/loss.py ----
class AdvLoss(torch.nn.Module):
    def __init__(self, eps=1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, inputs):
        inputs = inputs.softmax(dim=1)
        loss = - torch.log(inputs + self.eps).mean(dim=1)
        return loss.mean()


# ---- modules/sag_resnet.py (widths divided by 8) ----
class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, kernel_size=3, padding=1, stride=stride, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        residual = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            residual = self.downsample(x)
        out += residual
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=1000, drop=0, sagnet=True, style_stage=3):
        super().__init__()
        self.drop = drop
        self.sagnet = sagnet
        self.style_stage = style_stage
        self.inplanes = 8
        self.conv1 = nn.Conv2d(3, 8, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 8, layers[0])
        self.layer2 = self._make_layer(block, 16, layers[1], stride=2)
        self.layer3 = self._make_layer(block, 32, layers[2], stride=2)
        self.layer4 = self._make_layer(block, 64, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(self.drop)
        self.fc = nn.Linear(64 * block.expansion, num_classes)
        if self.sagnet:
            self.style_randomization = StyleRandomization()
            self.content_randomization = ContentRandomization()
            style_layers = []
            if style_stage == 1:
                self.inplanes = 8
                style_layers += [self._make_layer(block, 8, layers[0])]
            if style_stage <= 2:
                self.inplanes = 8 * block.expansion
                style_layers += [self._make_layer(block, 16, layers[1], stride=2)]
            if style_stage <= 3:
                self.inplanes = 16 * block.expansion
                style_layers += [self._make_layer(block, 32, layers[2], stride=2)]
            if style_stage <= 4:
                self.inplanes = 32 * block.expansion
                style_layers += [self._make_layer(block, 64, layers[3], stride=2)]
            self.style_net = nn.Sequential(*style_layers)
            self.style_avgpool = nn.AdaptiveAvgPool2d(1)
            self.style_dropout = nn.Dropout(self.drop)
            self.style_fc = nn.Linear(64 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
            if isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def adv_params(self):
        params = []
        layers = [self.bn1, self.layer1, self.layer2, self.layer3, self.layer4]
        for layer in layers[:self.style_stage]:
            for m in layer.modules():
                if isinstance(m, nn.BatchNorm2d):
                    params += [p for p in m.parameters()]
        return params

    def style_params(self):
        params = []
        for m in [self.style_net, self.style_fc]:
            params += [p for p in m.parameters()]
        return params

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * block.expansion, stride=stride, kernel_size=1, bias=False),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = []
        layers.append(block(self.inplanes, planes, stride, downsample))
        self.inplanes = planes * block.expansion
        for i in range(1, blocks):
            layers.append(block(self.inplanes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)
        for i, layer in enumerate([self.layer1, self.layer2, self.layer3, self.layer4]):
            if self.sagnet and i + 1 == self.style_stage:
                x_style = self.content_randomization(x)
                x = self.style_randomization(x)
            x = layer(x)
        feat = self.avgpool(x)
        feat = feat.view(x.size(0), -1)
        feat = self.dropout(feat)
        y = self.fc(feat)
        if self.sagnet:
            x_style = self.style_net(x_style)
            feat = self.style_avgpool(x_style)
            feat = feat.view(feat.size(0), -1)
            feat = self.style_dropout(feat)
            y_style = self.style_fc(feat)
        else:
            y_style = None
        return y, y_style


# ---- train.py ----
class Args:
    sagnet = True
    lr, weight_decay, momentum = 0.004, 1e-4, 0.9
    w_adv, clip_adv = 0.1, 0.1
    iterations, num_classes = 2, 3


args = Args()


def init_model():
    global model
    model = ResNet(BasicBlock, [1, 1, 1, 1], num_classes=args.num_classes, sagnet=args.sagnet, style_stage=3)


def init_optimizer():
    global optimizer, optimizer_style, optimizer_adv
    global criterion, criterion_style, criterion_adv
    optim_hyperparams = {'lr': args.lr, 'weight_decay': args.weight_decay, 'momentum': args.momentum}
    params = model.parameters()
    optimizer = optim.SGD(params, **optim_hyperparams)
    criterion = torch.nn.CrossEntropyLoss()
    if args.sagnet:
        params_style = model.style_params()
        optimizer_style = optim.SGD(params_style, **optim_hyperparams)
        criterion_style = torch.nn.CrossEntropyLoss()
        params_adv = model.adv_params()
        optimizer_adv = optim.SGD(params_adv, **optim_hyperparams)
        criterion_adv = AdvLoss()


def train(step):
    model.train()
    data = torch.randn(6, 3, 32, 32)
    label = torch.randint(0, args.num_classes, (6,))
    y, y_style = model(data)
    if args.sagnet:
        # learn style
        loss_style = criterion(y_style, label)
        optimizer_style.zero_grad()
        loss_style.backward(retain_graph=True)
        optimizer_style.step()
        # learn style_adv
        loss_adv = args.w_adv * criterion_adv(y_style)
        optimizer_adv.zero_grad()
        loss_adv.backward(retain_graph=True)  # expect: GG103
        if args.clip_adv is not None:
            torch.nn.utils.clip_grad_norm_(model.adv_params(), args.clip_adv)
        optimizer_adv.step()
    # learn content
    loss = criterion(y, label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())


if __name__ == '__main__':
    torch.manual_seed(0)
    init_model()
    init_optimizer()
    for step in range(args.iterations):
        train(step)
