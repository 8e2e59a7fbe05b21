# Source: https://github.com/chaiyujin/glow-pytorch/issues/2
"""Training chaiyujin/glow-pytorch's Glow (glow/models.py, glow/modules.py, glow/thops.py): the
affine coupling of FlowStep.normal_flow splits z into two views, `z1, z2 =
thops.split_feature(z, "split")`, runs the coupling network on z1 (its first conv saves z1 for its
backward) and then updates the other half in place, `z2 += shift` and `z2 *= scale`. z1 and z2 are
views of the same tensor, so the write changes what the conv saved, and the NLL backward fails
("one of the variables needed for gradient computation has been modified by an inplace
operation"; the reporter saw it with batch size 1, and PR 6, "Fixed un-computable gradients",
rewrites the coupling out of place). ActNorm2d, InvertibleConv1x1 (no LU), the coupling network f,
FlowStep, squeeze2d and the Gaussian log-likelihood are the repository's at the PR's parent; one
level of two flow steps with a standard-normal top prior stands in for FlowNet/Glow, on random
8x8 images."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def thops_sum(tensor, dim=None, keepdim=False):
    if dim is None:
        return torch.sum(tensor)
    if isinstance(dim, int):
        dim = [dim]
    dim = sorted(dim)
    for d in dim:
        tensor = tensor.sum(dim=d, keepdim=True)
    if not keepdim:
        for i, d in enumerate(dim):
            tensor.squeeze_(d - i)
    return tensor


def split_feature(tensor, type="split"):
    C = tensor.size(1)
    if type == "split":
        return tensor[:, :C // 2, ...], tensor[:, C // 2:, ...]
    elif type == "cross":
        return tensor[:, 0::2, ...], tensor[:, 1::2, ...]


def cat_feature(tensor_a, tensor_b):
    return torch.cat((tensor_a, tensor_b), dim=1)


def pixels(tensor):
    return int(tensor.size(2) * tensor.size(3))


class ActNorm2d(nn.Module):
    def __init__(self, num_features, scale=1.):
        super().__init__()
        size = [1, num_features, 1, 1]
        self.register_parameter("bias", nn.Parameter(torch.zeros(*size)))
        self.register_parameter("logs", nn.Parameter(torch.zeros(*size)))
        self.scale = float(scale)
        self.inited = False

    def initialize_parameters(self, input):
        with torch.no_grad():
            bias = input.clone().mean(dim=[0, 2, 3], keepdim=True) * -1.0
            vars = ((input.clone() + bias) ** 2).mean(dim=[0, 2, 3], keepdim=True)
            logs = torch.log(self.scale / (torch.sqrt(vars) + 1e-6))
            self.bias.data.copy_(bias.data)
            self.logs.data.copy_(logs.data)
            self.inited = True

    def forward(self, input, logdet=None):
        if not self.inited:
            self.initialize_parameters(input)
        input = input + self.bias
        input = input * torch.exp(self.logs)
        if logdet is not None:
            logdet = logdet + thops_sum(self.logs) * pixels(input)
        return input, logdet


class Conv2d(nn.Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size=3, weight_std=0.05):
        super().__init__(in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False)
        self.weight.data.normal_(mean=0.0, std=weight_std)
        self.actnorm = ActNorm2d(out_channels)

    def forward(self, input):
        x = super().forward(input)
        x, _ = self.actnorm(x)
        return x


class Conv2dZeros(nn.Conv2d):
    def __init__(self, in_channels, out_channels, logscale_factor=3):
        super().__init__(in_channels, out_channels, 3, padding=1)
        self.logscale_factor = logscale_factor
        self.register_parameter("logs", nn.Parameter(torch.zeros(out_channels, 1, 1)))
        self.weight.data.zero_()
        self.bias.data.zero_()

    def forward(self, input):
        output = super().forward(input)
        return output * torch.exp(self.logs * self.logscale_factor)


class InvertibleConv1x1(nn.Module):
    def __init__(self, num_channels):
        super().__init__()
        w_init = np.linalg.qr(np.random.randn(num_channels, num_channels))[0].astype(np.float32)
        self.register_parameter("weight", nn.Parameter(torch.Tensor(w_init)))
        self.w_shape = [num_channels, num_channels]

    def forward(self, input, logdet=None):
        dlogdet = torch.log(torch.abs(torch.det(self.weight))) * pixels(input)
        weight = self.weight.view(self.w_shape[0], self.w_shape[1], 1, 1)
        z = F.conv2d(input, weight)
        if logdet is not None:
            logdet = logdet + dlogdet
        return z, logdet


def f(in_channels, out_channels, hidden_channels):
    return nn.Sequential(
        Conv2d(in_channels, hidden_channels), nn.ReLU(inplace=False),
        Conv2d(hidden_channels, hidden_channels, kernel_size=1), nn.ReLU(inplace=False),
        Conv2dZeros(hidden_channels, out_channels))


class FlowStep(nn.Module):
    def __init__(self, in_channels, hidden_channels):
        super().__init__()
        self.actnorm = ActNorm2d(in_channels)
        self.invconv = InvertibleConv1x1(in_channels)
        self.f = f(in_channels // 2, in_channels, hidden_channels)

    def forward(self, input, logdet):
        z, logdet = self.actnorm(input, logdet=logdet)
        z, logdet = self.invconv(z, logdet)
        z1, z2 = split_feature(z, "split")
        h = self.f(z1)
        shift, scale = split_feature(h, "cross")
        scale = torch.sigmoid(scale + 2.)
        z2 += shift
        z2 *= scale
        logdet = thops_sum(torch.log(scale), dim=[1, 2, 3]) + logdet
        z = cat_feature(z1, z2)
        return z, logdet


def squeeze2d(input, factor=2):
    B, C, H, W = input.size()
    x = input.view(B, C, H // factor, factor, W // factor, factor)
    x = x.permute(0, 1, 3, 5, 2, 4).contiguous()
    return x.view(B, C * factor * factor, H // factor, W // factor)


Log2PI = float(np.log(2 * np.pi))


def gaussian_logp(mean, logs, x):
    likelihood = -0.5 * (logs * 2. + ((x - mean) ** 2) / torch.exp(logs * 2.) + Log2PI)
    return thops_sum(likelihood, dim=[1, 2, 3])


class Glow(nn.Module):
    def __init__(self, in_channels=3, hidden_channels=16, K=2):
        super().__init__()
        self.flows = nn.ModuleList([FlowStep(in_channels * 4, hidden_channels) for _ in range(K)])

    def forward(self, x):
        n_pixel = pixels(x) * x.size(1)
        z = x + torch.rand_like(x) / 256.
        logdet = torch.zeros_like(x[:, 0, 0, 0]) + float(-np.log(256.) * n_pixel)
        z = squeeze2d(z)
        for flow in self.flows:
            z, logdet = flow(z, logdet)
        objective = logdet + gaussian_logp(torch.zeros_like(z), torch.zeros_like(z), z)
        nll = -objective / float(np.log(2.) * n_pixel)
        return z, nll


graph = Glow()
optim = torch.optim.Adam(graph.parameters(), lr=1e-3)
for global_step in range(2):
    x = torch.rand(1, 3, 8, 8) - 0.5
    z, nll = graph(x)
    loss_generative = torch.mean(nll)
    graph.zero_grad()
    optim.zero_grad()
    loss_generative.backward()  # expect: GG103
    optim.step()
    print(global_step, loss_generative.item())
