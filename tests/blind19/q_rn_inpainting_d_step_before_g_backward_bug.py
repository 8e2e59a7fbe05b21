# Source: https://github.com/geekyutao/RN/issues/21
"""Region Normalization (geekyutao/RN) main.py train(): with torch 1.7 training fails with "one of
the variables needed for gradient computation has been modified by an inplace operation:
[torch.cuda.FloatTensor [1, 512, 4, 4]] is at version 2; expected version 1".

Each batch builds d_loss from D(gt) and D(prediction.detach()) and g_loss from
g_fake = D(prediction), and only then runs `d_loss.backward(); dis_optimizer.step()` followed by
`g_loss.backward()`. g_fake's graph runs through the discriminator's spectral-normalised conv
weights (conv5.weight_orig, [1, 512, 4, 4]) that the D step has just updated in place, so
g_loss.backward() raises. The maintainer's advice in the thread ("d_loss should be
back-propagated immediately once you have calculated it") is what the repository's commit
fc0d9fa ("support torch1.7") does: backward and step D right after d_loss, then run D on the
prediction for the generator loss. Channels and image size are shrunk; G_Net is a small stand-in (one residual block)
for the RN generator (same call signature); the data loader is random images and masks.
"""
import time
import argparse
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


def spectral_norm(module, mode=True):
    if mode:
        return nn.utils.spectral_norm(module)
    return module


class ResnetBlock(nn.Module):
    def __init__(self, dim, dilation=1, use_spectral_norm=True):
        super(ResnetBlock, self).__init__()
        self.conv_block = nn.Sequential(
            nn.ReflectionPad2d(dilation),
            spectral_norm(nn.Conv2d(in_channels=dim, out_channels=dim, kernel_size=3, padding=0, dilation=dilation, bias=not use_spectral_norm), use_spectral_norm),
            nn.InstanceNorm2d(dim, track_running_stats=False),
            nn.ReLU(True),
            nn.ReflectionPad2d(1),
            spectral_norm(nn.Conv2d(in_channels=dim, out_channels=dim, kernel_size=3, padding=0, dilation=1, bias=not use_spectral_norm), use_spectral_norm),
            nn.InstanceNorm2d(dim, track_running_stats=False),
        )

    def forward(self, x):
        out = x + self.conv_block(x)
        return out


class G_Net(nn.Module):
    """Stand-in for the RN generator: encoder, residual blocks, decoder."""
    def __init__(self, input_channels=3, residual_blocks=2, threshold=None):
        super(G_Net, self).__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(input_channels + 1, 16, kernel_size=3, padding=1), nn.ReLU(True),
            nn.Conv2d(16, 32, kernel_size=4, stride=2, padding=1), nn.ReLU(True))
        self.middle = nn.Sequential(*[ResnetBlock(32, 2) for _ in range(residual_blocks)])
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(32, 16, kernel_size=4, stride=2, padding=1), nn.ReLU(True),
            nn.Conv2d(16, 3, kernel_size=3, padding=1))

    def forward(self, x, mask):
        x = torch.cat([x * (1 - mask), mask], dim=1)
        x = self.encoder(x)
        x = self.middle(x)
        x = self.decoder(x)
        x = (torch.tanh(x) + 1) / 2
        return x


class D_Net(nn.Module):
    def __init__(self, in_channels, use_sigmoid=True, use_spectral_norm=True):
        super(D_Net, self).__init__()
        self.use_sigmoid = use_sigmoid
        self.conv1 = nn.Sequential(
            spectral_norm(nn.Conv2d(in_channels=in_channels, out_channels=8, kernel_size=4, stride=2, padding=1, bias=not use_spectral_norm), use_spectral_norm),
            nn.LeakyReLU(0.2, inplace=True))
        self.conv2 = nn.Sequential(
            spectral_norm(nn.Conv2d(in_channels=8, out_channels=16, kernel_size=4, stride=2, padding=1, bias=not use_spectral_norm), use_spectral_norm),
            nn.LeakyReLU(0.2, inplace=True))
        self.conv3 = nn.Sequential(
            spectral_norm(nn.Conv2d(in_channels=16, out_channels=16, kernel_size=4, stride=2, padding=1, bias=not use_spectral_norm), use_spectral_norm),
            nn.LeakyReLU(0.2, inplace=True))
        self.conv4 = nn.Sequential(
            spectral_norm(nn.Conv2d(in_channels=16, out_channels=16, kernel_size=4, stride=1, padding=1, bias=not use_spectral_norm), use_spectral_norm),
            nn.LeakyReLU(0.2, inplace=True))
        self.conv5 = nn.Sequential(
            spectral_norm(nn.Conv2d(in_channels=16, out_channels=1, kernel_size=4, stride=1, padding=1, bias=not use_spectral_norm), use_spectral_norm))

    def forward(self, x):
        conv1 = self.conv1(x)
        conv2 = self.conv2(conv1)
        conv3 = self.conv3(conv2)
        conv4 = self.conv4(conv3)
        conv5 = self.conv5(conv4)
        outputs = conv5
        if self.use_sigmoid:
            outputs = torch.sigmoid(conv5)
        return outputs, [conv1, conv2, conv3, conv4, conv5]


class AdversarialLoss(nn.Module):
    def __init__(self, type='nsgan', target_real_label=1.0, target_fake_label=0.0):
        super(AdversarialLoss, self).__init__()
        self.type = type
        self.register_buffer('real_label', torch.tensor(target_real_label))
        self.register_buffer('fake_label', torch.tensor(target_fake_label))
        if type == 'nsgan':
            self.criterion = nn.BCELoss()
        elif type == 'lsgan':
            self.criterion = nn.MSELoss()
        elif type == 'hinge':
            self.criterion = nn.ReLU()

    def __call__(self, outputs, is_real, is_disc=None):
        if self.type == 'hinge':
            if is_disc:
                if is_real:
                    outputs = -outputs
                return self.criterion(1 + outputs).mean()
            else:
                return (-outputs).mean()
        else:
            labels = (self.real_label if is_real else self.fake_label).expand_as(outputs)
            loss = self.criterion(outputs, labels)
            return loss


class InpaintingModel(nn.Module):
    def __init__(self, g_lr, d_lr, l1_weight, gan_weight, iter=0, threshold=None):
        super(InpaintingModel, self).__init__()
        self.generator = G_Net(input_channels=3, residual_blocks=1, threshold=threshold)
        self.discriminator = D_Net(in_channels=3, use_sigmoid=True)
        self.l1_loss = nn.L1Loss()
        self.adversarial_loss = AdversarialLoss('nsgan')
        self.g_lr, self.d_lr = g_lr, d_lr
        self.l1_weight, self.gan_weight = l1_weight, gan_weight
        self.global_iter = iter
        self.gen_optimizer = optim.Adam(params=self.generator.parameters(), lr=float(self.g_lr), betas=(0., 0.9))
        self.dis_optimizer = optim.Adam(params=self.discriminator.parameters(), lr=float(self.d_lr), betas=(0., 0.9))


def build_dataloader(bs, size, n_batches=2):
    """Stand-in for the flist image/mask loader: (gt, mask, index) batches."""
    batches = []
    for i in range(n_batches):
        gt = torch.rand(bs, 3, size, size)
        mask = (torch.rand(bs, 1, size, size) > 0.7).float()
        batches.append((gt, mask, torch.arange(bs) + i * bs))
    return batches


opt = argparse.Namespace(bs=2, input_size=32, start_epoch=1, nEpochs=1, lr=0.0001, threshold=0.8,
                         l1_weight=1.0, gan_weight=0.1, print_interval=1)
cuda = False


def train(epoch):
    iteration, avg_g_loss, avg_d_loss, avg_l1_loss, avg_gan_loss = 0, 0, 0, 0, 0
    last_l1_loss, last_gan_loss, cur_l1_loss, cur_gan_loss = 0, 0, 0, 0
    model.train()
    t0 = time.time()
    for batch in training_data_loader:
        gt, mask, index = batch

        prediction = model.generator(gt, mask)
        merged_result = prediction * mask + gt * (1 - mask)

        # Compute Loss
        g_loss, d_loss = 0, 0

        d_real, _ = model.discriminator(gt)
        d_fake, _ = model.discriminator(prediction.detach())
        d_real_loss = model.adversarial_loss(d_real, True, True)
        d_fake_loss = model.adversarial_loss(d_fake, False, True)
        d_loss += (d_real_loss + d_fake_loss) / 2

        g_fake, _ = model.discriminator(prediction)
        g_gan_loss = model.adversarial_loss(g_fake, True, False)
        g_loss += model.gan_weight * g_gan_loss
        g_l1_loss = model.l1_loss(gt, merged_result) / torch.mean(mask)
        g_loss += model.l1_weight * g_l1_loss

        # Record
        cur_l1_loss += g_l1_loss.data.item()
        cur_gan_loss += g_gan_loss.data.item()
        avg_l1_loss += g_l1_loss.data.item()
        avg_gan_loss += g_gan_loss.data.item()
        avg_g_loss += g_loss.data.item()
        avg_d_loss += d_loss.data.item()

        # Backward
        d_loss.backward()
        model.dis_optimizer.step()
        model.dis_optimizer.zero_grad()

        g_loss.backward()  # expect: GG103
        model.gen_optimizer.step()
        model.gen_optimizer.zero_grad()

        model.global_iter += 1
        iteration += 1
        t1 = time.time()
        td, t0 = t1 - t0, t1

        if iteration % opt.print_interval == 0:
            print("=> Epoch[{}]({}/{}): Avg L1 loss: {:.6f} | G loss: {:.6f} | Avg D loss: {:.6f} || Timer: {:.4f} sec.".format(
                epoch, iteration, len(training_data_loader), avg_l1_loss / opt.print_interval,
                avg_g_loss / opt.print_interval, avg_d_loss / opt.print_interval, td), flush=True)
            avg_g_loss, avg_d_loss, avg_l1_loss, avg_gan_loss = 0, 0, 0, 0


model = InpaintingModel(g_lr=opt.lr, d_lr=(0.1 * opt.lr), l1_weight=opt.l1_weight, gan_weight=opt.gan_weight,
                        iter=0, threshold=opt.threshold)
training_data_loader = build_dataloader(opt.bs, opt.input_size)

for epoch in range(opt.start_epoch, opt.nEpochs + 1):
    train(epoch)
