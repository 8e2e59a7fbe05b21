# Source: https://github.com/leftthomas/SRGAN/commit/5d3fa53f8cb7c4548ee50fb745d01b8d48342c48
"""leftthomas/SRGAN ``train.py``, before commit 5d3fa53 "fix train bugs".

Each batch computes ``fake_img = netG(z)`` and ``fake_out = netD(fake_img)`` once. The discriminator
step backpropagates ``d_loss = d_loss_real + d_loss_fake`` with a plain ``d_loss.backward()``, which
frees the graph of ``fake_out`` (through netD and netG). The generator step then builds
``g_loss = generator_criterion(fake_img, real_img, fake_out, real_label)`` from that same
``fake_out`` and calls ``g_loss.backward()``, which has to go back through the freed netD/netG
graph: "Trying to backward through the graph a second time".

The commit's fix was ``d_loss.backward(retain_graph=True)``. Under current torch that is not enough:
``optimizerD.step()`` then updates netD's weights in place between the two backwards, and the G
backward fails with "modified by an inplace operation" instead. This fixed version therefore uses the
right fix (what the repository later converged to): the D step scores ``fake_img.detach()``, and the
G step recomputes ``fake_out = netD(fake_img)`` after the D update.
"""
from math import log10

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


# ---- model.py --------------------------------------------------------------------------------

class Generator(nn.Module):
    def __init__(self, upscale_factor):
        super(Generator, self).__init__()

        self.conv1 = nn.Conv2d(3, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(8, 3 * (upscale_factor ** 2), (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

    def forward(self, x):
        x = F.leaky_relu(self.conv1(x), inplace=True)
        x = F.leaky_relu(self.conv2(x), inplace=True)
        x = F.leaky_relu(self.conv3(x), inplace=True)
        x = torch.sigmoid(self.pixel_shuffle(self.conv4(x)))
        return x


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(
            nn.Conv2d(3, 8, 4, 2, 1, bias=False),
            nn.BatchNorm2d(8),
            nn.LeakyReLU(0.2, inplace=True),

            nn.Conv2d(8, 8 * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(8 * 2),
            nn.LeakyReLU(0.2, inplace=True),

            nn.Conv2d(8 * 2, 8 * 4, 4, 2, 1, bias=False),
            nn.BatchNorm2d(8 * 4),
            nn.LeakyReLU(0.2, inplace=True),

            nn.Conv2d(8 * 4, 1, 2, 1, 0, bias=False),
            nn.Sigmoid()
        )

    def forward(self, x):
        output = self.main(x)
        return output.view(output.size(0), -1).mean(dim=-1)


# ---- loss.py ---------------------------------------------------------------------------------

def vgg16_relu2_2():
    # stand-in for the frozen, pretrained vgg16 features[:9] (no download)
    relu2_2 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True),
                            nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True),
                            nn.MaxPool2d(2, 2),
                            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True))
    for param in relu2_2.parameters():
        param.requires_grad = False
    relu2_2.eval()
    return relu2_2


class GeneratorLoss(nn.Module):
    def __init__(self, loss_network):
        super(GeneratorLoss, self).__init__()
        self.loss_network = loss_network
        self.adversarial_loss = nn.BCELoss()

    def forward(self, out_images, target_images, out_labels, target_labels):
        # Content Loss
        features_input = self.loss_network(out_images)
        features_target = self.loss_network(target_images)
        content_loss = torch.mean((features_input - features_target) ** 2)
        # Adversarial Loss
        adversarial_loss = self.adversarial_loss(out_labels, target_labels)
        return content_loss + adversarial_loss


# ---- train.py --------------------------------------------------------------------------------

UPSCALE_FACTOR = 3
NUM_EPOCHS = 2

# DatasetFromFolder stand-in: (low-res input, high-res target) pairs
train_loader = [(torch.rand(4, 3, 8, 8), torch.rand(4, 3, 24, 24)) for _ in range(2)]
val_loader = [(torch.rand(4, 3, 8, 8), torch.rand(4, 3, 24, 24))]

netG = Generator(UPSCALE_FACTOR)
print('# generator parameters:', sum(param.numel() for param in netG.parameters()))
netD = Discriminator()
print('# discriminator parameters:', sum(param.numel() for param in netD.parameters()))
generator_criterion = GeneratorLoss(loss_network=vgg16_relu2_2())
discriminator_criterion = nn.BCELoss()

optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))

for epoch in range(NUM_EPOCHS):
    for data, target in train_loader:
        batch_size = data.size(0)
        real_label = torch.ones(batch_size)
        fake_label = torch.zeros(batch_size)

        ############################
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        ###########################
        real_img = target

        # compute loss of real_img
        real_out = netD(real_img)
        d_loss_real = discriminator_criterion(real_out, real_label)
        real_scores = real_out.data.mean()

        # compute loss of fake_img
        z = data
        fake_img = netG(z)
        fake_out = netD(fake_img.detach())
        d_loss_fake = discriminator_criterion(fake_out, fake_label)
        fake_scores = fake_out.data.mean()

        # bp and optimize
        d_loss = d_loss_real + d_loss_fake
        optimizerD.zero_grad()
        d_loss.backward()
        optimizerD.step()

        ############################
        # (2) Update G network: maximize log(D(G(z)))
        ###########################
        # compute loss of fake_img
        fake_out = netD(fake_img)
        g_loss = generator_criterion(fake_img, real_img, fake_out, real_label)

        # bp and optimize
        optimizerG.zero_grad()
        g_loss.backward()
        optimizerG.step()

        print('[%d/%d] Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f'
              % (epoch + 1, NUM_EPOCHS, d_loss.item(), g_loss.item(), real_scores, fake_scores))

    for val_data, val_target in val_loader:
        lr = val_data
        sr = netG(lr).data.cpu()
        mse = F.mse_loss(sr, val_target)
        psnr = 10 * log10(1 / mse.item())
        print('[convert LR images to SR images] PSNR: %.4f db' % psnr)
