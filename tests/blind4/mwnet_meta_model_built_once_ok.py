# Source: https://github.com/xjtushujun/meta-weight-net/issues/8
"""Meta-Weight-Net's train() as the repository writes it (the reporter's own diagnosis: keep
meta_model and model apart): a fresh meta_model is built and loaded from `model.state_dict()` for
every batch, so the virtual step's non-leaf weights belong to that batch's graph only, and no
backward needs retain_graph."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.init as init
from torch.autograd import Variable

device = torch.device("cpu")


def to_var(x, requires_grad=True):
    return Variable(x, requires_grad=requires_grad)


class MetaModule(nn.Module):
    # adopted from: Adrien Ecoffet https://github.com/AdrienLE
    def params(self):
        for name, param in self.named_params(self):
            yield param

    def named_params(self, curr_module=None, memo=None, prefix=''):
        if memo is None:
            memo = set()
        if hasattr(curr_module, 'named_leaves'):
            for name, p in curr_module.named_leaves():
                if p is not None and p not in memo:
                    memo.add(p)
                    yield prefix + ('.' if prefix else '') + name, p
        else:
            for name, p in curr_module._parameters.items():
                if p is not None and p not in memo:
                    memo.add(p)
                    yield prefix + ('.' if prefix else '') + name, p
        for mname, module in curr_module.named_children():
            submodule_prefix = prefix + ('.' if prefix else '') + mname
            for name, p in self.named_params(module, memo, submodule_prefix):
                yield name, p

    def update_params(self, lr_inner, first_order=False, source_params=None):
        for tgt, src in zip(self.named_params(self), source_params):
            name_t, param_t = tgt
            grad = src
            if first_order:
                grad = to_var(grad.detach().data)
            tmp = param_t - lr_inner * grad
            self.set_param(self, name_t, tmp)

    def set_param(self, curr_mod, name, param):
        if '.' in name:
            n = name.split('.')
            module_name = n[0]
            rest = '.'.join(n[1:])
            for name, mod in curr_mod.named_children():
                if module_name == name:
                    self.set_param(mod, rest, param)
                    break
        else:
            setattr(curr_mod, name, param)


class MetaLinear(MetaModule):
    def __init__(self, *args, **kwargs):
        super().__init__()
        ignore = nn.Linear(*args, **kwargs)
        self.register_buffer('weight', to_var(ignore.weight.data, requires_grad=True))
        self.register_buffer('bias', to_var(ignore.bias.data, requires_grad=True))

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def named_leaves(self):
        return [('weight', self.weight), ('bias', self.bias)]


class MetaConv2d(MetaModule):
    def __init__(self, *args, **kwargs):
        super().__init__()
        ignore = nn.Conv2d(*args, **kwargs)
        self.stride, self.padding = ignore.stride, ignore.padding
        self.register_buffer('weight', to_var(ignore.weight.data, requires_grad=True))
        self.register_buffer('bias', None)

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding)

    def named_leaves(self):
        return [('weight', self.weight), ('bias', self.bias)]


class MetaBatchNorm2d(MetaModule):
    def __init__(self, num_features):
        super().__init__()
        ignore = nn.BatchNorm2d(num_features)
        self.eps, self.momentum = ignore.eps, ignore.momentum
        self.register_buffer('weight', to_var(ignore.weight.data, requires_grad=True))
        self.register_buffer('bias', to_var(ignore.bias.data, requires_grad=True))
        self.register_buffer('running_mean', torch.zeros(num_features))
        self.register_buffer('running_var', torch.ones(num_features))

    def forward(self, x):
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training, self.momentum, self.eps)

    def named_leaves(self):
        return [('weight', self.weight), ('bias', self.bias)]


class BasicBlock(MetaModule):
    def __init__(self, in_planes, planes, stride=1):
        super(BasicBlock, self).__init__()
        self.conv1 = MetaConv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = MetaBatchNorm2d(planes)
        self.conv2 = MetaConv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = MetaBatchNorm2d(planes)
        self.stride, self.pad = stride, (planes - in_planes) // 2

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = out + F.pad(x[:, :, ::self.stride, ::self.stride], (0, 0, 0, 0, self.pad, self.pad))
        return F.relu(out)


class ResNet32(MetaModule):
    def __init__(self, num_classes):
        super(ResNet32, self).__init__()
        self.conv1 = MetaConv2d(3, 4, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = MetaBatchNorm2d(4)
        self.layer1 = nn.Sequential(BasicBlock(4, 4, 1))
        self.layer2 = nn.Sequential(BasicBlock(4, 8, 2))
        self.linear = MetaLinear(8, num_classes)
        for m in self.modules():
            if isinstance(m, (MetaLinear, MetaConv2d)):
                init.kaiming_normal_(m.weight)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer2(self.layer1(out))
        out = F.avg_pool2d(out, out.size()[3])
        return self.linear(out.view(out.size(0), -1))


class VNet(MetaModule):
    def __init__(self, input, hidden1, output):
        super(VNet, self).__init__()
        self.linear1 = MetaLinear(input, hidden1)
        self.relu1 = nn.ReLU(inplace=True)
        self.linear2 = MetaLinear(hidden1, output)

    def forward(self, x):
        x = self.relu1(self.linear1(x))
        return torch.sigmoid(self.linear2(x))


def build_model():
    return ResNet32(10)


def train(train_loader, train_meta_loader, model, vnet, optimizer_model, optimizer_vnet, epoch, lr=0.1):
    train_meta_loader_iter = iter(train_meta_loader)
    for batch_idx, (inputs, targets) in enumerate(train_loader):
        model.train()
        meta_model = build_model()
        meta_model.load_state_dict(model.state_dict())
        outputs = meta_model(inputs)

        cost = F.cross_entropy(outputs, targets, reduction='none')
        cost_v = torch.reshape(cost, (len(cost), 1))
        v_lambda = vnet(cost_v.data)
        l_f_meta = torch.sum(cost_v * v_lambda)/len(cost_v)
        meta_model.zero_grad()
        grads = torch.autograd.grad(l_f_meta, (meta_model.params()), create_graph=True)
        meta_model.update_params(lr_inner=lr, source_params=grads)
        del grads

        inputs_val, targets_val = next(train_meta_loader_iter)
        y_g_hat = meta_model(inputs_val)
        l_g_meta = F.cross_entropy(y_g_hat, targets_val)

        optimizer_vnet.zero_grad()
        l_g_meta.backward()
        optimizer_vnet.step()

        outputs = model(inputs)
        cost_w = F.cross_entropy(outputs, targets, reduction='none')
        cost_v = torch.reshape(cost_w, (len(cost_w), 1))
        with torch.no_grad():
            w_new = vnet(cost_v)
        loss = torch.sum(cost_v * w_new)/len(cost_v)

        optimizer_model.zero_grad()
        loss.backward()
        optimizer_model.step()
        print(epoch, batch_idx, loss.item(), l_g_meta.item())


train_loader = [(torch.randn(6, 3, 8, 8), torch.randint(0, 10, (6,))) for _ in range(3)]
train_meta_loader = [(torch.randn(6, 3, 8, 8), torch.randint(0, 10, (6,))) for _ in range(3)]
model = build_model()
vnet = VNet(1, 16, 1)
optimizer_model = torch.optim.SGD(model.params(), 0.1, momentum=0.9, weight_decay=5e-4)
optimizer_vnet = torch.optim.Adam(vnet.params(), 1e-3, weight_decay=1e-4)
for epoch in range(2):
    train(train_loader, train_meta_loader, model, vnet, optimizer_model, optimizer_vnet, epoch)
