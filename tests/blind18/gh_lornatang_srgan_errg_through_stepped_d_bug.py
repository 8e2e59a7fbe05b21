# Source: https://github.com/Lornatang/SRGAN-PyTorch/commit/4450108
"""Lornatang/SRGAN-PyTorch, train.py before "fix un backward": in the adversarial loop `fake_output =
netD(high_resolution_fake_image)` is computed once, D's loss uses `fake_output.detach()`, and after
`optimizerD.step()` the generator's loss reuses `adversarial_loss(fake_output, real_label)`: its graph goes
back through the discriminator whose weights the step rewrote, so `errG.backward()` raises "one of the
variables needed for gradient computation has been modified by an inplace operation". The commit detached
`fake_output` in errG too, which silences the error but drops G's adversarial gradient; the `_ok` twin runs D
on the detached fake and G on a fresh `netD(high_resolution_fake_image)` after D's step. torchvision's
ImageFolder/transforms, VGG and the SRGAN nets are small stand-ins; the smoothed real labels are kept in [0.7, 1]
(torch 2.13's BCELoss refuses targets > 1); random images, no files written, CPU.
"""
import argparse
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.data


# ---- srgan_pytorch/model.py (small stand-ins) ----
class Generator(nn.Module):
    def __init__(self, scale_factor=4):
        super(Generator, self).__init__()
        self.head = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.PReLU())
        self.body = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.PReLU(),
                                  nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8))
        self.upsample = nn.Sequential(nn.Conv2d(8, 3 * scale_factor ** 2, 3, padding=1),
                                      nn.PixelShuffle(scale_factor))

    def forward(self, x):
        h = self.head(x)
        h = h + self.body(h)
        return torch.tanh(self.upsample(h))


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.2),
            nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.LeakyReLU(0.2),
            nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(8, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1),
                                        nn.Sigmoid())

    def forward(self, x):
        return self.classifier(self.features(x))


class FeatureExtractor(nn.Module):
    """VGG19 features[:36] stand-in: a frozen conv stack."""
    def __init__(self):
        super(FeatureExtractor, self).__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
        for p in self.features.parameters():
            p.requires_grad = False

    def forward(self, x):
        return self.features(x)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        torch.nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        torch.nn.init.normal_(m.weight, 1.0, 0.02)
        torch.nn.init.zeros_(m.bias)


# ---- torchvision stand-ins ----
_MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
_STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


def normalize(img):
    return (img - _MEAN) / _STD


def make_resize(image_size):
    def resize(img):
        return normalize(F.interpolate(img[None], size=(image_size, image_size), mode="bilinear",
                                       align_corners=False)[0])
    return resize


parser = argparse.ArgumentParser(description="PyTorch Super Resolution GAN.")
parser.add_argument("--epochs", default=2, type=int)
parser.add_argument("-b", "--batch-size", default=4, type=int)
parser.add_argument("--lr", type=float, default=0.0001)
parser.add_argument("--image-size", type=int, default=6)
parser.add_argument("--upscale-factor", type=int, default=4)
parser.add_argument("-p", "--print-freq", default=100, type=int)
parser.add_argument("--manualSeed", type=int, default=7)
args = parser.parse_args([])

random.seed(args.manualSeed)
torch.manual_seed(args.manualSeed)

# datasets.ImageFolder + DataLoader stand-in: random images in [0, 1]
dataset = torch.utils.data.TensorDataset(
    torch.rand(8, 3, args.image_size * args.upscale_factor, args.image_size * args.upscale_factor),
    torch.zeros(8, dtype=torch.long))
dataloader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True)

device = torch.device("cpu")
netG = Generator(scale_factor=args.upscale_factor).to(device)
netD = Discriminator().to(device)
netG.apply(weights_init)
netD.apply(weights_init)

feature_extractor = FeatureExtractor().to(device)
content_loss = nn.MSELoss().to(device)
adversarial_loss = nn.BCELoss().to(device)

optimizerG = torch.optim.Adam(netG.parameters(), lr=args.lr)
resize = make_resize(args.image_size)

# Pre-train generator using raw MSE loss
pre_epochs = 1
for epoch in range(pre_epochs):
    for i, data in enumerate(dataloader):
        netG.zero_grad()
        high_resolution_real_image = data[0].to(device)
        batch_size = high_resolution_real_image.size(0)
        low_resolution_image = torch.randn(batch_size, 3, args.image_size, args.image_size, device=device)
        for batch_index in range(batch_size):
            low_resolution_image[batch_index] = resize(high_resolution_real_image[batch_index].cpu())
            high_resolution_real_image[batch_index] = normalize(high_resolution_real_image[batch_index])
        high_resolution_fake_image = netG(low_resolution_image)
        generator_content_loss = content_loss(high_resolution_fake_image, high_resolution_real_image)
        generator_content_loss.backward()
        optimizerG.step()
        print(f"[{epoch}/{pre_epochs}][{i}/{len(dataloader)}] Generator_MSE_Loss: {generator_content_loss.item():.4f}")

optimizerG = torch.optim.Adam(netG.parameters(), lr=args.lr * 0.1)
optimizerD = torch.optim.Adam(netD.parameters(), lr=args.lr * 0.1)

g_losses = []
d_losses = []

for epoch in range(0, args.epochs):
    for i, data in enumerate(dataloader):
        high_resolution_real_image = data[0].to(device)
        batch_size = high_resolution_real_image.size(0)

        low_resolution_image = torch.randn(batch_size, 3, args.image_size, args.image_size, device=device)

        # Down sample images to low resolution
        for batch_index in range(batch_size):
            low_resolution_image[batch_index] = resize(high_resolution_real_image[batch_index].cpu())
            high_resolution_real_image[batch_index] = normalize(high_resolution_real_image[batch_index])

        # Generate real and fake inputs
        high_resolution_fake_image = netG(low_resolution_image)
        real_image = torch.rand(batch_size, 1, device=device) * 0.3 + 0.7  # was * 0.5 + 0.7: BCELoss now refuses targets > 1
        real_label = torch.ones(batch_size, 1, device=device)
        fake_image = torch.rand(batch_size, 1, device=device) * 0.3

        ##############################################
        # (1) Update D network
        ##############################################
        netD.zero_grad()

        # train with real
        real_output = netD(high_resolution_real_image)
        errD_real = adversarial_loss(real_output, real_image)
        # train with fake
        fake_output = netD(high_resolution_fake_image)
        errD_fake = adversarial_loss(fake_output.detach(), fake_image)
        errD = (errD_real + errD_fake) / 2

        errD.backward()
        optimizerD.step()

        ##############################################
        # (2) Update G network
        ##############################################
        netG.zero_grad()

        # Extract picture features
        real_features = feature_extractor(high_resolution_real_image)
        fake_features = feature_extractor(high_resolution_fake_image)

        image_content_loss = content_loss(high_resolution_fake_image, high_resolution_real_image)
        feature_content_loss = content_loss(fake_features, real_features) * 0.006
        generator_content_loss = image_content_loss + feature_content_loss

        # Calculate the difference between the generated image and the real image.
        generator_adversarial_loss = adversarial_loss(fake_output, real_label) * 0.001
        errG = generator_content_loss + generator_adversarial_loss

        # Calculate gradients for generator
        errG.backward()  # expect: GG103
        # Update generator weights
        optimizerG.step()

        print(f"[{epoch}/{args.epochs}][{i}/{len(dataloader)}] Loss_D: {errD.item():.4f} loss_G: {errG.item():.4f}")
        if i % args.print_freq == 0:
            d_losses.append(errD.item())
            g_losses.append(errG.item())
