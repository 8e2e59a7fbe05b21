# Source: https://github.com/manuelfritsche/real-world-sr/issues/18
"""real-world-sr's DSGAN training, fixed (the thread only downgraded torch; this is the right fix):
the discriminator is updated on `model_d(fake_img.detach())`, without retaining any graph, and the
generator's adversarial scores are computed again after optimizer_d.step()
(`fake_tex = model_d(fake_img)`), so the generator loss never walks the discriminator graph of
the weights before the step. The data loaders, the LPIPS perceptual loss and tensorboard are small
stand-ins written here; the networks are the repository's, shrunk.
"""
import argparse

import torch
import torch.optim as optim
from torch import nn


# ---- model.py ----
class Generator(nn.Module):
    def __init__(self, n_res_blocks=8):
        super(Generator, self).__init__()
        self.block_input = nn.Sequential(nn.Conv2d(3, 64, kernel_size=3, padding=1), nn.PReLU())
        self.res_blocks = nn.ModuleList([ResidualBlock(64) for _ in range(n_res_blocks)])
        self.block_output = nn.Conv2d(64, 3, kernel_size=3, padding=1)

    def forward(self, x):
        block = self.block_input(x)
        for res_block in self.res_blocks:
            block = res_block(block)
        block = self.block_output(block)
        return torch.sigmoid(block)


class Discriminator(nn.Module):
    def __init__(self, recursions=1, stride=1, kernel_size=5, gaussian=False, wgan=False, highpass=True):
        super(Discriminator, self).__init__()
        if highpass:
            self.filter = FilterHigh(recursions=recursions, stride=stride, kernel_size=kernel_size,
                                     include_pad=False, gaussian=gaussian)
        else:
            self.filter = None
        self.net = DiscriminatorBasic(n_input_channels=3)
        self.wgan = wgan

    def forward(self, x, y=None):
        if self.filter is not None:
            x = self.filter(x)
        x = self.net(x)
        if y is not None:
            x -= self.net(self.filter(y)).mean(0, keepdim=True)
        if not self.wgan:
            x = torch.sigmoid(x)
        return x


class DiscriminatorBasic(nn.Module):
    def __init__(self, n_input_channels=3):
        super(DiscriminatorBasic, self).__init__()
        self.net = nn.Sequential(
            nn.Conv2d(n_input_channels, 64, kernel_size=5, padding=2),
            nn.LeakyReLU(0.2),
            nn.Conv2d(64, 128, kernel_size=5, padding=2),
            nn.BatchNorm2d(128),
            nn.LeakyReLU(0.2),
            nn.Conv2d(128, 256, kernel_size=5, padding=2),
            nn.BatchNorm2d(256),
            nn.LeakyReLU(0.2),
            nn.Conv2d(256, 1, kernel_size=1)
        )

    def forward(self, x):
        return self.net(x)


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super(ResidualBlock, self).__init__()
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, padding=1)
        self.prelu = nn.PReLU()
        self.conv2 = nn.Conv2d(channels, channels, kernel_size=3, padding=1)

    def forward(self, x):
        residual = self.conv1(x)
        residual = self.prelu(residual)
        residual = self.conv2(residual)
        return x + residual


class FilterLow(nn.Module):
    def __init__(self, recursions=1, kernel_size=5, stride=1, padding=True, include_pad=True, gaussian=False):
        super(FilterLow, self).__init__()
        pad = int((kernel_size - 1) / 2) if padding else 0
        self.filter = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=pad, count_include_pad=include_pad)
        self.recursions = recursions

    def forward(self, img):
        for i in range(self.recursions):
            img = self.filter(img)
        return img


class FilterHigh(nn.Module):
    def __init__(self, recursions=1, kernel_size=5, stride=1, include_pad=True, normalize=True, gaussian=False):
        super(FilterHigh, self).__init__()
        self.filter_low = FilterLow(recursions=1, kernel_size=kernel_size, stride=stride,
                                    include_pad=include_pad, gaussian=gaussian)
        self.recursions = recursions
        self.normalize = normalize

    def forward(self, img):
        if self.recursions > 1:
            for i in range(self.recursions - 1):
                img = self.filter_low(img)
        img = img - self.filter_low(img)
        if self.normalize:
            return 0.5 + img * 0.5
        else:
            return img


# ---- loss.py ----
def generator_loss(labels, wasserstein=False, weights=None):
    if not isinstance(labels, list):
        labels = (labels,)
    if weights is None:
        weights = [1.0 / len(labels)] * len(labels)
    loss = 0.0
    for label, weight in zip(labels, weights):
        if wasserstein:
            loss += weight * torch.mean(-label)
        else:
            loss += weight * torch.mean(-torch.log(label + 1e-8))
    return loss


def discriminator_loss(reals, fakes, wasserstein=False, grad_penalties=None, weights=None):
    if not isinstance(reals, list):
        reals = (reals,)
    if not isinstance(fakes, list):
        fakes = (fakes,)
    if weights is None:
        weights = [1.0 / len(fakes)] * len(fakes)
    loss = 0.0
    for real, fake, weight in zip(reals, fakes, weights):
        loss += weight * (-torch.log(real + 1e-8).mean() - torch.log(1 - fake + 1e-8).mean())
    return loss


class PerceptualLoss(nn.Module):
    """Stand-in for the LPIPS perceptual loss: distance of frozen random conv features."""
    def __init__(self):
        super(PerceptualLoss, self).__init__()
        self.loss_network = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
        for param in self.loss_network.parameters():
            param.requires_grad = False

    def forward(self, x, y):
        return ((self.loss_network(x) - self.loss_network(y)) ** 2).mean()


class GeneratorLoss(nn.Module):
    def __init__(self, recursions=1, stride=1, kernel_size=5, use_perceptual_loss=True, wgan=False, w_col=1,
                 w_tex=0.001, w_per=0.1, gaussian=False, **kwargs):
        super(GeneratorLoss, self).__init__()
        self.pixel_loss = nn.L1Loss()
        self.color_filter = FilterLow(recursions=recursions, stride=stride, kernel_size=kernel_size,
                                      padding=False, gaussian=gaussian)
        self.perceptual_loss = PerceptualLoss()
        self.use_perceptual_loss = use_perceptual_loss
        self.wasserstein = wgan
        self.w_col, self.w_tex, self.w_per = w_col, w_tex, w_per

    def forward(self, tex_labels, out_images, target_images):
        self.last_tex_loss = generator_loss(tex_labels, wasserstein=self.wasserstein)
        self.last_per_loss = self.perceptual_loss(out_images, target_images)
        self.last_col_loss = self.color_loss(out_images, target_images)
        loss = self.w_col * self.last_col_loss + self.w_tex * self.last_tex_loss
        if self.use_perceptual_loss:
            loss += self.w_per * self.last_per_loss
        return loss

    def color_loss(self, x, y):
        return self.pixel_loss(self.color_filter(x), self.color_filter(y))


# ---- train.py ----
parser = argparse.ArgumentParser(description='Train Downscaling Models')
parser.add_argument('--batch_size', default=2, type=int)
parser.add_argument('--num_epochs', default=2, type=int)
parser.add_argument('--learning_rate', default=0.0002, type=float)
parser.add_argument('--adam_beta_1', default=0.5, type=float)
parser.add_argument('--num_res_blocks', default=2, type=int)
parser.add_argument('--kernel_size', default=5, type=int)
parser.add_argument('--disc_freq', default=1, type=int)
parser.add_argument('--gen_freq', default=1, type=int)
parser.add_argument('--w_col', default=1, type=float)
parser.add_argument('--w_tex', default=0.005, type=float)
parser.add_argument('--w_per', default=0.01, type=float)
opt = parser.parse_args([])
opt.wgan, opt.gaussian, opt.highpass, opt.ragan = False, False, True, False


def train_loader(n_batches=2):
    """Stand-in for the DF2K TrainDataset loader: (input HR crop, real-domain crop for D)."""
    for _ in range(n_batches):
        yield torch.rand(opt.batch_size, 3, 16, 16), torch.rand(opt.batch_size, 3, 16, 16)


model_g = Generator(n_res_blocks=opt.num_res_blocks)
model_d = Discriminator(kernel_size=opt.kernel_size, gaussian=opt.gaussian, wgan=opt.wgan, highpass=opt.highpass)
g_loss_module = GeneratorLoss(**vars(opt))
optimizer_g = optim.Adam(model_g.parameters(), lr=opt.learning_rate, betas=[opt.adam_beta_1, 0.999])
optimizer_d = optim.Adam(model_d.parameters(), lr=opt.learning_rate, betas=[opt.adam_beta_1, 0.999])

iteration = 1
for epoch in range(1, opt.num_epochs + 1):
    model_g.train()
    model_d.train()
    for input_img, disc_img in train_loader():
        iteration += 1

        # Estimate scores of fake and real images
        fake_img = model_g(input_img)
        real_tex = model_d(disc_img)
        fake_tex = model_d(fake_img.detach())

        # Update Discriminator network
        if iteration % opt.disc_freq == 0:
            grad_pen = None
            model_d.zero_grad()
            d_tex_loss = discriminator_loss(real_tex, fake_tex, wasserstein=opt.wgan, grad_penalties=grad_pen)
            d_tex_loss.backward()
            optimizer_d.step()

        # Update Generator network
        if iteration % opt.gen_freq == 0:
            model_g.zero_grad()
            fake_tex = model_d(fake_img)
            g_loss = g_loss_module(fake_tex, fake_img, input_img)
            assert not torch.isnan(g_loss), 'Generator loss returns NaN values'
            g_loss.backward()
            optimizer_g.step()
