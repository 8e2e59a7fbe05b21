# Source: https://github.com/tamarott/SinGAN/issues/148
"""SinGAN's train_single_scale with the fix that fits the cause the issue
describes (the G loop reuses a fake made with older netG weights): each generator step makes its
fake image anew, `fake = netG(noise.detach(), prev)`, so errG's graph goes through netG's current
weights instead of those an earlier optimizerG.step() has overwritten. The `retain_graph=True`
arguments go too: no later backward walks the graphs they kept (the discriminator's real and fake
terms, errG, the reconstruction loss), so they only hold memory. The models and the gradient
penalty are the repository's at one small scale; a random 16x16 image stands in for the
training image."""
import torch
import torch.nn as nn
import torch.optim as optim
from types import SimpleNamespace

opt = SimpleNamespace(nc_im=3, nfc=8, min_nfc=8, ker_size=3, padd_size=0, stride=1, num_layer=3,
                      niter=2, Dsteps=3, Gsteps=3, lr_d=0.0005, lr_g=0.0005, beta1=0.5,
                      lambda_grad=0.1, alpha=10, noise_amp=0.1, device=torch.device('cpu'))


class ConvBlock(nn.Sequential):
    def __init__(self, in_channel, out_channel, ker_size, padd, stride):
        super(ConvBlock, self).__init__()
        self.add_module('conv', nn.Conv2d(in_channel, out_channel, kernel_size=ker_size, stride=stride, padding=padd)),
        self.add_module('norm', nn.BatchNorm2d(out_channel)),
        self.add_module('LeakyRelu', nn.LeakyReLU(0.2, inplace=True))


class WDiscriminator(nn.Module):
    def __init__(self, opt):
        super(WDiscriminator, self).__init__()
        N = int(opt.nfc)
        self.head = ConvBlock(opt.nc_im, N, opt.ker_size, opt.padd_size, 1)
        self.body = nn.Sequential()
        for i in range(opt.num_layer - 2):
            N = int(opt.nfc / pow(2, (i + 1)))
            block = ConvBlock(max(2 * N, opt.min_nfc), max(N, opt.min_nfc), opt.ker_size, opt.padd_size, 1)
            self.body.add_module('block%d' % (i + 1), block)
        self.tail = nn.Conv2d(max(N, opt.min_nfc), 1, kernel_size=opt.ker_size, stride=1, padding=opt.padd_size)

    def forward(self, x):
        x = self.head(x)
        x = self.body(x)
        x = self.tail(x)
        return x


class GeneratorConcatSkip2CleanAdd(nn.Module):
    def __init__(self, opt):
        super(GeneratorConcatSkip2CleanAdd, self).__init__()
        N = opt.nfc
        self.head = ConvBlock(opt.nc_im, N, opt.ker_size, opt.padd_size, 1)
        self.body = nn.Sequential()
        for i in range(opt.num_layer - 2):
            N = int(opt.nfc / pow(2, (i + 1)))
            block = ConvBlock(max(2 * N, opt.min_nfc), max(N, opt.min_nfc), opt.ker_size, opt.padd_size, 1)
            self.body.add_module('block%d' % (i + 1), block)
        self.tail = nn.Sequential(
            nn.Conv2d(max(N, opt.min_nfc), opt.nc_im, kernel_size=opt.ker_size, stride=1, padding=opt.padd_size),
            nn.Tanh()
        )

    def forward(self, x, y):
        x = self.head(x)
        x = self.body(x)
        x = self.tail(x)
        ind = int((y.shape[2] - x.shape[2]) / 2)
        y = y[:, :, ind:(y.shape[2] - ind), ind:(y.shape[3] - ind)]
        return x + y


def calc_gradient_penalty(netD, real_data, fake_data, LAMBDA, device):
    alpha = torch.rand(1, 1)
    alpha = alpha.expand(real_data.size())
    interpolates = alpha * real_data + ((1 - alpha) * fake_data)
    interpolates = torch.autograd.Variable(interpolates, requires_grad=True)
    disc_interpolates = netD(interpolates)
    gradients = torch.autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                                    grad_outputs=torch.ones(disc_interpolates.size()),
                                    create_graph=True, retain_graph=True, only_inputs=True)[0]
    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA
    return gradient_penalty


def generate_noise(size, num_samp=1, device='cpu'):
    return torch.randn(num_samp, size[0], size[1], size[2], device=device)


def train_single_scale(netD, netG, real, opt):
    pad = int(((opt.ker_size - 1) * opt.num_layer) / 2)
    m_noise = nn.ZeroPad2d(pad)
    m_image = nn.ZeroPad2d(pad)
    nzx, nzy = real.shape[2], real.shape[3]
    alpha = opt.alpha

    fixed_noise = generate_noise([opt.nc_im, nzx, nzy], device=opt.device)
    z_opt = m_noise(torch.zeros(fixed_noise.shape))

    optimizerD = optim.Adam(netD.parameters(), lr=opt.lr_d, betas=(opt.beta1, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=opt.lr_g, betas=(opt.beta1, 0.999))

    for epoch in range(opt.niter):
        z_opt = m_noise(generate_noise([1, nzx, nzy], device=opt.device).expand(1, 3, nzx, nzy))
        noise_ = m_noise(generate_noise([1, nzx, nzy], device=opt.device).expand(1, 3, nzx, nzy))

        ############################
        # (1) Update D network: maximize D(x) + D(G(z))
        ###########################
        for j in range(opt.Dsteps):
            # train with real
            netD.zero_grad()
            output = netD(real)
            errD_real = -output.mean()
            errD_real.backward()

            # train with fake
            if (j == 0) & (epoch == 0):  # coarsest scale: no previous image
                prev = torch.full([1, opt.nc_im, nzx, nzy], 0.)
                prev = m_image(prev)
                z_prev = torch.full([1, opt.nc_im, nzx, nzy], 0.)
                z_prev = m_noise(z_prev)
            noise = noise_

            fake = netG(noise.detach(), prev)
            output = netD(fake.detach())
            errD_fake = output.mean()
            errD_fake.backward()

            gradient_penalty = calc_gradient_penalty(netD, real, fake, opt.lambda_grad, opt.device)
            gradient_penalty.backward()

            optimizerD.step()

        ############################
        # (2) Update G network: maximize D(G(z))
        ###########################
        for j in range(opt.Gsteps):
            netG.zero_grad()
            fake = netG(noise.detach(), prev)
            output = netD(fake)
            errG = -output.mean()
            errG.backward()
            if alpha != 0:
                loss = nn.MSELoss()
                Z_opt = opt.noise_amp * z_opt + z_prev
                rec_loss = alpha * loss(netG(Z_opt.detach(), z_prev), real)
                rec_loss.backward()
            optimizerG.step()
    return z_opt, netG


real = torch.rand(1, 3, 16, 16) * 2 - 1
netD = WDiscriminator(opt)
netG = GeneratorConcatSkip2CleanAdd(opt)
train_single_scale(netD, netG, real, opt)
