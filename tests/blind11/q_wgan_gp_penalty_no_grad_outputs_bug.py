# Source: https://github.com/kuc2477/pytorch-wgan-gp/issues/1
"""The thread asks why WGAN.gradient_penalty() passes `grad_outputs=torch.ones(c.size())` to
autograd.grad and whether it can be left out. This is the repository's model and training step with
it left out: the critic's output on the interpolated images is a [N, 1] tensor, not a scalar, so
torch raises "grad can be implicitly created only for scalar outputs" inside the penalty. Fix (the
repository's own code, the answer to the question): pass grad_outputs=torch.ones_like(c). The data
stream, visdom logging and CUDA switches are left out; images are random.
"""
import torch
from torch import nn
from torch.nn import functional as F
from torch.autograd import Variable
from torch import autograd

EPSILON = 1e-16


class Critic(nn.Module):
    def __init__(self, image_size, image_channel_size, channel_size):
        super().__init__()
        self.image_size = image_size
        self.image_channel_size = image_channel_size
        self.channel_size = channel_size
        self.conv1 = nn.Conv2d(image_channel_size, channel_size, kernel_size=4, stride=2, padding=1)
        self.conv2 = nn.Conv2d(channel_size, channel_size * 2, kernel_size=4, stride=2, padding=1)
        self.conv3 = nn.Conv2d(channel_size * 2, channel_size * 4, kernel_size=4, stride=2, padding=1)
        self.conv4 = nn.Conv2d(channel_size * 4, channel_size * 8, kernel_size=4, stride=1, padding=1)
        self.fc = nn.Linear((image_size // 8) ** 2 * channel_size * 4, 1)

    def forward(self, x):
        x = F.leaky_relu(self.conv1(x))
        x = F.leaky_relu(self.conv2(x))
        x = F.leaky_relu(self.conv3(x))
        x = F.leaky_relu(self.conv4(x))
        x = x.view(-1, (self.image_size // 8) ** 2 * self.channel_size * 4)
        return self.fc(x)


class Generator(nn.Module):
    def __init__(self, z_size, image_size, image_channel_size, channel_size):
        super().__init__()
        self.z_size = z_size
        self.image_size = image_size
        self.image_channel_size = image_channel_size
        self.channel_size = channel_size
        self.fc = nn.Linear(z_size, (image_size // 8) ** 2 * channel_size * 8)
        self.bn0 = nn.BatchNorm2d(channel_size * 8)
        self.bn1 = nn.BatchNorm2d(channel_size * 4)
        self.deconv1 = nn.ConvTranspose2d(channel_size * 8, channel_size * 4, kernel_size=4, stride=2, padding=1)
        self.bn2 = nn.BatchNorm2d(channel_size * 2)
        self.deconv2 = nn.ConvTranspose2d(channel_size * 4, channel_size * 2, kernel_size=4, stride=2, padding=1)
        self.bn3 = nn.BatchNorm2d(channel_size)
        self.deconv3 = nn.ConvTranspose2d(channel_size * 2, channel_size, kernel_size=4, stride=2, padding=1)
        self.deconv4 = nn.ConvTranspose2d(channel_size, image_channel_size, kernel_size=3, stride=1, padding=1)

    def forward(self, z):
        g = F.relu(self.bn0(self.fc(z).view(
            z.size(0), self.channel_size * 8, self.image_size // 8, self.image_size // 8)))
        g = F.relu(self.bn1(self.deconv1(g)))
        g = F.relu(self.bn2(self.deconv2(g)))
        g = F.relu(self.bn3(self.deconv3(g)))
        g = self.deconv4(g)
        return torch.sigmoid(g)


class WGAN(nn.Module):
    def __init__(self, label, z_size, image_size, image_channel_size, c_channel_size, g_channel_size):
        super().__init__()
        self.label = label
        self.z_size = z_size
        self.image_size = image_size
        self.image_channel_size = image_channel_size
        self.critic = Critic(image_size=image_size, image_channel_size=image_channel_size,
                             channel_size=c_channel_size)
        self.generator = Generator(z_size=z_size, image_size=image_size,
                                   image_channel_size=image_channel_size, channel_size=g_channel_size)

    def c_loss(self, x, z, return_g=False):
        g = self.generator(z)
        c_x = self.critic(x).mean()
        c_g = self.critic(g).mean()
        l = -(c_x - c_g)
        return (l, g) if return_g else l

    def g_loss(self, z, return_g=False):
        g = self.generator(z)
        l = -self.critic(g).mean()
        return (l, g) if return_g else l

    def sample_noise(self, size):
        return Variable(torch.randn(size, self.z_size)) * .1

    def gradient_penalty(self, x, g, lamda):
        assert x.size() == g.size()
        a = torch.rand(x.size(0), 1)
        a = a.expand(x.size(0), x.nelement() // x.size(0)).contiguous().view(
            x.size(0), self.image_channel_size, self.image_size, self.image_size)
        interpolated = Variable(a * x.data + (1 - a) * g.data, requires_grad=True)
        c = self.critic(interpolated)
        gradients = autograd.grad(c, interpolated, create_graph=True, retain_graph=True)[0]  # expect: GG105
        return lamda * ((1 - (gradients + EPSILON).norm(2, dim=1)) ** 2).mean()


def train(model, batches, d_trains=2, lamda=10.):
    critic_optimizer = torch.optim.Adam(model.critic.parameters(), lr=1e-4, betas=(.5, .9))
    generator_optimizer = torch.optim.Adam(model.generator.parameters(), lr=1e-4, betas=(.5, .9))
    for batch_index, x in enumerate(batches):
        for _ in range(d_trains):
            critic_optimizer.zero_grad()
            z = model.sample_noise(x.size(0))
            c_loss, g = model.c_loss(x, z, return_g=True)
            c_loss_gp = c_loss + model.gradient_penalty(x, g, lamda=lamda)
            c_loss_gp.backward()
            critic_optimizer.step()
        generator_optimizer.zero_grad()
        z = model.sample_noise(x.size(0))
        g_loss = model.g_loss(z)
        g_loss.backward()
        generator_optimizer.step()


wgan = WGAN(label='rand', z_size=8, image_size=16, image_channel_size=1, c_channel_size=4, g_channel_size=4)
train(wgan, [torch.rand(4, 1, 16, 16) for _ in range(2)])
