# Source: https://github.com/lcy0604/EraseNet/issues/5
"""EraseNet (scene-text removal) training: `G_loss.backward()` in train_STE.py raises "one of the
variables needed for gradient computation has been modified by an inplace operation:
[torch.cuda.FloatTensor [1, 512, 4, 4]], which is output 38 of BroadcastBackward, is at version 2;
expected version 1" (the reporter went back to PyTorch 1.3.1).

The discriminator update lives inside the loss module LossWithGAN_STE.forward (loss/Loss.py): it
computes D_real / D_fake = self.discriminator(output, mask), runs
`D_loss.backward(retain_graph=True)` and `self.D_optimizer.step()` -- which updates the
discriminator's weights in place -- and then returns a generator loss that still contains the
adversarial term `0.1 * D_fake` from BEFORE the step. The training loop's G_loss.backward() walks
back through the discriminator and needs the overwritten weights. Fix (the thread has none):
train D on `output.detach()` and, after the D step, run the discriminator again on `output` for the
generator's adversarial term. STRnet2, Discriminator_STE, the VGG feature extractor, the data
loader and the SummaryWriter are small CPU stand-ins with the same call signatures; the loss
module is the repository's; the loop follows train_STE.py (G forward, criterion, G_loss.backward(), step).
"""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


class SummaryWriter(object):
    """Stand-in for tensorboardX.SummaryWriter."""
    def __init__(self, logdir=None):
        self.logdir = logdir

    def add_scalar(self, tag, value, step):
        pass


class Discriminator_STE(nn.Module):
    """Stand-in for the local-global SN-PatchGAN discriminator."""
    def __init__(self, inputChannels):
        super(Discriminator_STE, self).__init__()
        sn = nn.utils.spectral_norm
        self.globalDis = nn.Sequential(
            sn(nn.Conv2d(inputChannels + 1, 8, 4, 2, 1)), nn.LeakyReLU(0.2, inplace=True),
            sn(nn.Conv2d(8, 16, 4, 2, 1)), nn.LeakyReLU(0.2, inplace=True),
            sn(nn.Conv2d(16, 16, 4, 2, 1)), nn.LeakyReLU(0.2, inplace=True))
        self.fusion = nn.Sequential(nn.Conv2d(16, 1, kernel_size=4))

    def forward(self, input, masks):
        global_feat = self.globalDis(torch.cat((input, 1 - masks), 1))
        return self.fusion(global_feat).view(input.size(0), -1)


class VGG16FeatureExtractor(nn.Module):
    """Stand-in for the frozen VGG16 feature extractor: three feature stages."""
    def __init__(self):
        super().__init__()
        self.enc_1 = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2))
        self.enc_2 = nn.Sequential(nn.Conv2d(8, 8, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2))
        self.enc_3 = nn.Sequential(nn.Conv2d(8, 8, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2))
        for i in range(3):
            for param in getattr(self, 'enc_{:d}'.format(i + 1)).parameters():
                param.requires_grad = False

    def forward(self, image):
        results = [image]
        for i in range(3):
            func = getattr(self, 'enc_{:d}'.format(i + 1))
            results.append(func(results[-1]))
        return results[1:]


class STRnet2(nn.Module):
    """Stand-in for the EraseNet generator: multi-scale outputs and a text mask."""
    def __init__(self, n_in_channel=3):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(n_in_channel, 8, 3, 1, 1), nn.ReLU())
        self.out1 = nn.Conv2d(8, 3, 1)
        self.out2 = nn.Conv2d(8, 3, 1)
        self.out3 = nn.Conv2d(8, 3, 1)
        self.out = nn.Conv2d(8, 3, 3, 1, 1)
        self.mask = nn.Conv2d(8, 1, 3, 1, 1)

    def forward(self, x):
        f = self.enc(x)
        x_o1 = self.out1(F.interpolate(f, scale_factor=0.25))
        x_o2 = self.out2(F.interpolate(f, scale_factor=0.5))
        x_o3 = self.out3(f)
        return x_o1, x_o2, x_o3, torch.sigmoid(self.out(f)), self.mask(f)


def gram_matrix(feat):
    (b, ch, h, w) = feat.size()
    feat = feat.view(b, ch, h * w)
    feat_t = feat.transpose(1, 2)
    gram = torch.bmm(feat, feat_t) / (ch * h * w)
    return gram


def dice_loss(input, target):
    input = torch.sigmoid(input)
    input = input.contiguous().view(input.size()[0], -1)
    target = target.contiguous().view(target.size()[0], -1)
    a = torch.sum(input * target, 1)
    b = torch.sum(input * input, 1) + 0.001
    c = torch.sum(target * target, 1) + 0.001
    d = (2 * a) / (b + c)
    dice_loss = torch.mean(d)
    return 1 - dice_loss


class LossWithGAN_STE(nn.Module):
    def __init__(self, logPath, extractor, Lamda, lr, betasInit=(0.5, 0.9)):
        super(LossWithGAN_STE, self).__init__()
        self.l1 = nn.L1Loss()
        self.extractor = extractor
        self.discriminator = Discriminator_STE(3)
        self.D_optimizer = torch.optim.Adam(self.discriminator.parameters(), lr=lr, betas=betasInit)
        self.lamda = Lamda
        self.writer = SummaryWriter(logPath)

    def forward(self, input, mask, x_o1, x_o2, x_o3, output, mm, gt, count, epoch):
        self.discriminator.zero_grad()
        D_real = self.discriminator(gt, mask)
        D_real = D_real.mean().sum() * -1
        D_fake = self.discriminator(output, mask)
        D_fake = D_fake.mean().sum() * 1
        D_loss = torch.mean(F.relu(1. + D_real)) + torch.mean(F.relu(1. + D_fake))
        D_fake = -torch.mean(D_fake)

        self.D_optimizer.zero_grad()
        D_loss.backward(retain_graph=True)
        self.D_optimizer.step()

        self.writer.add_scalar('LossD/Discrinimator loss', D_loss.item(), count)

        output_comp = mask * input + (1 - mask) * output
        holeLoss = 10 * self.l1((1 - mask) * output, (1 - mask) * gt)
        validAreaLoss = 2 * self.l1(mask * output, mask * gt)

        mask_loss = dice_loss(1 - mask, mm)
        masks_a = F.interpolate(mask, scale_factor=0.25)
        masks_b = F.interpolate(mask, scale_factor=0.5)
        imgs1 = F.interpolate(gt, scale_factor=0.25)
        imgs2 = F.interpolate(gt, scale_factor=0.5)
        msrloss = 8 * self.l1((1 - mask) * x_o3, (1 - mask) * gt) + 0.8 * self.l1(mask * x_o3, mask * gt) + \
            6 * self.l1((1 - masks_b) * x_o2, (1 - masks_b) * imgs2) + 1 * self.l1(masks_b * x_o2, masks_b * imgs2) + \
            5 * self.l1((1 - masks_a) * x_o1, (1 - masks_a) * imgs1) + 0.8 * self.l1(masks_a * x_o1, masks_a * imgs1)

        feat_output_comp = self.extractor(output_comp)
        feat_output = self.extractor(output)
        feat_gt = self.extractor(gt)

        prcLoss = 0.0
        for i in range(3):
            prcLoss += 0.01 * self.l1(feat_output[i], feat_gt[i])
            prcLoss += 0.01 * self.l1(feat_output_comp[i], feat_gt[i])

        styleLoss = 0.0
        for i in range(3):
            styleLoss += 120 * self.l1(gram_matrix(feat_output[i]), gram_matrix(feat_gt[i]))
            styleLoss += 120 * self.l1(gram_matrix(feat_output_comp[i]), gram_matrix(feat_gt[i]))

        GLoss = msrloss + holeLoss + validAreaLoss + prcLoss + styleLoss + 0.1 * D_fake + 1 * mask_loss
        self.writer.add_scalar('Generator/Joint loss', GLoss.item(), count)
        return GLoss.sum()


def TrainDataloader(n_batches=2, batch_size=2, size=32):
    """Stand-in for ErasingData: (imgs, gt, masks, path)."""
    for i in range(n_batches):
        imgs = torch.rand(batch_size, 3, size, size)
        gt = torch.rand(batch_size, 3, size, size)
        masks = (torch.rand(batch_size, 1, size, size) > 0.2).float()
        yield imgs, gt, masks, ['img_%d.jpg' % i]


netG = STRnet2(3)
G_optimizer = torch.optim.Adam(netG.parameters(), lr=0.0001, betas=(0.5, 0.9))
criterion = LossWithGAN_STE('./logs', VGG16FeatureExtractor(), lr=0.00001, betasInit=(0.0, 0.9), Lamda=10.0)

count = 1
num_epochs = 1
for i in range(1, num_epochs + 1):
    netG.train()
    for k, (imgs, gt, masks, path) in enumerate(TrainDataloader()):
        netG.zero_grad()
        x_o1, x_o2, x_o3, fake_images, mm = netG(imgs)
        G_loss = criterion(imgs, masks, x_o1, x_o2, x_o3, fake_images, mm, gt, count, i)
        G_loss = G_loss.sum()
        G_optimizer.zero_grad()
        G_loss.backward()  # expect: GG103
        G_optimizer.step()
        print('[{}/{}] Generator Loss of epoch{} is {}'.format(count, k, i, G_loss.item()))
        count += 1
