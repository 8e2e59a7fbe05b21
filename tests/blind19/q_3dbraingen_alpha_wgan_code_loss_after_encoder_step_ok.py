# Source: https://github.com/cyclomon/3dbraingen/issues/16
"""Fixed twin (the thread has no fix; this is the right one). 3dbraingen Alpha_WGAN_ADNI_train: `loss3.backward(retain_graph=True)` in the code-discriminator
phase raises "one of the variables needed for gradient computation has been modified by an inplace
operation: [torch.cuda.FloatTensor [1, 64, 3, 3, 3]] is at version 293; expected version 292".

The encoder/generator phase computes `c_loss = -CD(z_hat).mean()` with z_hat = E(real_images),
calls loss1.backward(retain_graph=True) and then e_optimizer.step() / g_optimizer.step(), which
update E's weights in place. The code-discriminator phase reuses that old c_loss in
`loss3 = -CD(z_rand).mean() - c_loss + gradient_penalty_cd`, so loss3.backward() walks back through
E's convolutions and needs the weights the step overwrote (the author: written for PyTorch 0.4).
Fix (the thread has none): in the CD phase score the code again, on a detached code
(`c_loss = -CD(z_hat.detach()).mean()`), and drop the retain_graph flags no later backward needs.
Volumes, channels and the latent size are shrunk, the ADNI loader is random data, and the nilearn
plots / checkpoint saves are left out (losses are printed with .item()).
The D phase's loss2.backward(retain_graph=True) keeps a graph no later backward walks.
"""
import numpy as np
import torch
from torch import nn
from torch import optim
from torch.nn import functional as F
from torch.autograd import Variable

torch.manual_seed(0)

BATCH_SIZE = 2
LAMBDA = 10
_eps = 1e-15
latent_dim = 16


class Discriminator(nn.Module):
    def __init__(self, channel=16, out_class=1, is_dis=True):
        super(Discriminator, self).__init__()
        self.is_dis = is_dis
        self.channel = channel
        n_class = out_class
        self.conv1 = nn.Conv3d(1, channel // 8, kernel_size=4, stride=2, padding=1)
        self.conv2 = nn.Conv3d(channel // 8, channel // 4, kernel_size=4, stride=2, padding=1)
        self.bn2 = nn.BatchNorm3d(channel // 4)
        self.conv3 = nn.Conv3d(channel // 4, channel // 2, kernel_size=4, stride=2, padding=1)
        self.bn3 = nn.BatchNorm3d(channel // 2)
        self.conv4 = nn.Conv3d(channel // 2, channel, kernel_size=4, stride=2, padding=1)
        self.bn4 = nn.BatchNorm3d(channel)
        self.conv5 = nn.Conv3d(channel, n_class, kernel_size=2, stride=1, padding=0)

    def forward(self, x, _return_activations=False):
        h1 = F.leaky_relu(self.conv1(x), negative_slope=0.2)
        h2 = F.leaky_relu(self.bn2(self.conv2(h1)), negative_slope=0.2)
        h3 = F.leaky_relu(self.bn3(self.conv3(h2)), negative_slope=0.2)
        h4 = F.leaky_relu(self.bn4(self.conv4(h3)), negative_slope=0.2)
        h5 = self.conv5(h4)
        output = h5
        return output


class Code_Discriminator(nn.Module):
    def __init__(self, code_size=100, num_units=750):
        super(Code_Discriminator, self).__init__()
        n_class = 1
        self.l1 = nn.Sequential(nn.Linear(code_size, num_units),
                                nn.BatchNorm1d(num_units),
                                nn.LeakyReLU(0.2, inplace=True))
        self.l2 = nn.Sequential(nn.Linear(num_units, num_units),
                                nn.BatchNorm1d(num_units),
                                nn.LeakyReLU(0.2, inplace=True))
        self.l3 = nn.Linear(num_units, 1)

    def forward(self, x):
        h1 = self.l1(x)
        h2 = self.l2(h1)
        h3 = self.l3(h2)
        output = h3
        return output


class Generator(nn.Module):
    def __init__(self, noise: int = 100, channel: int = 4):
        super(Generator, self).__init__()
        _c = channel
        self.relu = nn.ReLU()
        self.noise = noise
        self.tp_conv1 = nn.ConvTranspose3d(noise, _c * 8, kernel_size=2, stride=1, padding=0, bias=False)
        self.bn1 = nn.BatchNorm3d(_c * 8)
        self.tp_conv2 = nn.Conv3d(_c * 8, _c * 4, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm3d(_c * 4)
        self.tp_conv3 = nn.Conv3d(_c * 4, _c * 2, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn3 = nn.BatchNorm3d(_c * 2)
        self.tp_conv4 = nn.Conv3d(_c * 2, _c, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn4 = nn.BatchNorm3d(_c)
        self.tp_conv5 = nn.Conv3d(_c, 1, kernel_size=3, stride=1, padding=1, bias=False)

    def forward(self, noise):
        noise = noise.view(-1, self.noise, 1, 1, 1)
        h = self.tp_conv1(noise)
        h = self.relu(self.bn1(h))
        h = F.interpolate(h, scale_factor=2)
        h = self.tp_conv2(h)
        h = self.relu(self.bn2(h))
        h = F.interpolate(h, scale_factor=2)
        h = self.tp_conv3(h)
        h = self.relu(self.bn3(h))
        h = F.interpolate(h, scale_factor=2)
        h = self.tp_conv4(h)
        h = self.relu(self.bn4(h))
        h = F.interpolate(h, scale_factor=2)
        h = self.tp_conv5(h)
        h = torch.tanh(h)
        return h


class ADNIdataset(torch.utils.data.Dataset):
    """Stand-in for the ADNI MRI volumes (32^3 instead of 64^3)."""
    def __len__(self):
        return 8

    def __getitem__(self, index):
        return torch.rand(1, 32, 32, 32) * 2 - 1


trainset = ADNIdataset()
train_loader = torch.utils.data.DataLoader(trainset, batch_size=BATCH_SIZE, shuffle=True, num_workers=0)


def inf_train_gen(data_loader):
    while True:
        for _, images in enumerate(data_loader):
            yield images


G = Generator(noise=latent_dim)
CD = Code_Discriminator(code_size=latent_dim, num_units=64)
D = Discriminator(is_dis=True)
E = Discriminator(out_class=latent_dim, is_dis=False)

g_optimizer = optim.Adam(G.parameters(), lr=0.0002)
d_optimizer = optim.Adam(D.parameters(), lr=0.0002)
e_optimizer = optim.Adam(E.parameters(), lr=0.0002)
cd_optimizer = optim.Adam(CD.parameters(), lr=0.0002)


def calc_gradient_penalty(model, x, x_gen, w=10):
    """WGAN-GP gradient penalty"""
    assert x.size() == x_gen.size(), "real and sampled sizes do not match"
    alpha_size = tuple((len(x), *(1,) * (x.dim() - 1)))
    alpha_t = torch.Tensor
    alpha = alpha_t(*alpha_size).uniform_()
    x_hat = x.data * alpha + x_gen.data * (1 - alpha)
    x_hat = Variable(x_hat, requires_grad=True)

    def eps_norm(x):
        x = x.view(len(x), -1)
        return (x * x + _eps).sum(-1).sqrt()

    def bi_penalty(x):
        return (x - 1) ** 2

    grad_xhat = torch.autograd.grad(model(x_hat).sum(), x_hat, create_graph=True, only_inputs=True)[0]
    penalty = w * bi_penalty(eps_norm(grad_xhat)).mean()
    return penalty


criterion_bce = nn.BCELoss()
criterion_l1 = nn.L1Loss()
criterion_mse = nn.MSELoss()

g_iter = 1
d_iter = 1
cd_iter = 1
TOTAL_ITER = 2
gen_load = inf_train_gen(train_loader)
for iteration in range(TOTAL_ITER):
    for p in D.parameters():
        p.requires_grad = False
    for p in CD.parameters():
        p.requires_grad = False
    for p in E.parameters():
        p.requires_grad = True
    for p in G.parameters():
        p.requires_grad = True

    ###############################################
    # Train Encoder - Generator
    ###############################################
    for iters in range(g_iter):
        G.zero_grad()
        E.zero_grad()
        real_images = gen_load.__next__()
        _batch_size = real_images.size(0)
        real_images = Variable(real_images)
        z_rand = Variable(torch.randn((_batch_size, latent_dim)))
        z_hat = E(real_images).view(_batch_size, -1)
        x_hat = G(z_hat)
        x_rand = G(z_rand)
        c_loss = -CD(z_hat).mean()

        d_real_loss = D(x_hat).mean()
        d_fake_loss = D(x_rand).mean()
        d_loss = -d_fake_loss - d_real_loss
        l1_loss = 10 * criterion_l1(x_hat, real_images)
        loss1 = l1_loss + d_loss

        if iters < g_iter - 1:
            loss1.backward()
        else:
            loss1.backward()
        e_optimizer.step()
        g_optimizer.step()
        g_optimizer.step()

    ###############################################
    # Train D
    ###############################################
    for p in D.parameters():
        p.requires_grad = True
    for p in CD.parameters():
        p.requires_grad = False
    for p in E.parameters():
        p.requires_grad = False
    for p in G.parameters():
        p.requires_grad = False

    for iters in range(d_iter):
        d_optimizer.zero_grad()
        real_images = gen_load.__next__()
        _batch_size = real_images.size(0)
        z_rand = Variable(torch.randn((_batch_size, latent_dim)))
        real_images = Variable(real_images)
        z_hat = E(real_images).view(_batch_size, -1)
        x_hat = G(z_hat)
        x_rand = G(z_rand)
        x_loss2 = -2 * D(real_images).mean() + D(x_hat).mean() + D(x_rand).mean()
        gradient_penalty_r = calc_gradient_penalty(D, real_images.data, x_rand.data)
        gradient_penalty_h = calc_gradient_penalty(D, real_images.data, x_hat.data)

        loss2 = x_loss2 + gradient_penalty_r + gradient_penalty_h
        loss2.backward()
        d_optimizer.step()

    ###############################################
    # Train CD
    ###############################################
    for p in D.parameters():
        p.requires_grad = False
    for p in CD.parameters():
        p.requires_grad = True
    for p in E.parameters():
        p.requires_grad = False
    for p in G.parameters():
        p.requires_grad = False

    for iters in range(cd_iter):
        cd_optimizer.zero_grad()
        z_rand = Variable(torch.randn((_batch_size, latent_dim)))
        gradient_penalty_cd = calc_gradient_penalty(CD, z_hat.data, z_rand.data)
        # fix: score the (detached) code again with the current CD instead of reusing the
        # encoder-phase c_loss, whose graph runs through E's already-stepped weights
        c_loss = -CD(z_hat.detach()).mean()
        loss3 = -CD(z_rand).mean() - c_loss + gradient_penalty_cd

        loss3.backward()
        cd_optimizer.step()

    print('[{}/{}]'.format(iteration, TOTAL_ITER),
          'D: {:<8.3}'.format(loss2.item()),
          'En_Ge: {:<8.3}'.format(loss1.item()),
          'Code: {:<8.3}'.format(loss3.item()))
