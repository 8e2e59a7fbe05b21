# Source: https://github.com/knazeri/edge-connect/issues/152
"""EdgeConnect's EdgeModel with the order the thread gave: backward() runs gen_loss.backward() and
the generator's step first, while the discriminator's weights are still those its forward saw;
dis_loss, computed on the detached fake edges, needs no generator weight. The thread stops there,
but gen_loss.backward() also leaves the generator's adversarial gradient in the discriminator's
.grad, which its step would then apply; the discriminator's gradients are cleared before
dis_loss.backward() so its step follows dis_loss alone."""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.nn.utils import spectral_norm


class Config:
    LR = 0.0001
    D2G_LR = 0.1
    BETA1 = 0.0
    BETA2 = 0.9
    GAN_LOSS = 'nsgan'
    FM_LOSS_WEIGHT = 10
    GPU = [0]


class AdversarialLoss(nn.Module):
    def __init__(self, type='nsgan', target_real_label=1.0, target_fake_label=0.0):
        super(AdversarialLoss, self).__init__()
        self.type = type
        self.register_buffer('real_label', torch.tensor(target_real_label))
        self.register_buffer('fake_label', torch.tensor(target_fake_label))
        self.criterion = nn.BCELoss()

    def __call__(self, outputs, is_real, is_disc=None):
        labels = (self.real_label if is_real else self.fake_label).expand_as(outputs)
        return self.criterion(outputs, labels)


class ResnetBlock(nn.Module):
    def __init__(self, dim, use_spectral_norm=False):
        super(ResnetBlock, self).__init__()
        self.conv_block = nn.Sequential(
            nn.ReflectionPad2d(1),
            spectral_norm(nn.Conv2d(dim, dim, 3, bias=not use_spectral_norm)),
            nn.InstanceNorm2d(dim, track_running_stats=False),
            nn.ReLU(True),
            nn.ReflectionPad2d(1),
            spectral_norm(nn.Conv2d(dim, dim, 3, bias=not use_spectral_norm)),
            nn.InstanceNorm2d(dim, track_running_stats=False),
        )

    def forward(self, x):
        return x + self.conv_block(x)


class EdgeGenerator(nn.Module):
    def __init__(self, residual_blocks=1, use_spectral_norm=True):
        super(EdgeGenerator, self).__init__()
        self.encoder = nn.Sequential(
            nn.ReflectionPad2d(3),
            spectral_norm(nn.Conv2d(3, 8, kernel_size=7)),
            nn.InstanceNorm2d(8, track_running_stats=False),
            nn.ReLU(True),
            spectral_norm(nn.Conv2d(8, 16, kernel_size=4, stride=2, padding=1)),
            nn.InstanceNorm2d(16, track_running_stats=False),
            nn.ReLU(True),
        )
        self.middle = nn.Sequential(*[ResnetBlock(16, use_spectral_norm) for _ in range(residual_blocks)])
        self.decoder = nn.Sequential(
            spectral_norm(nn.ConvTranspose2d(16, 8, kernel_size=4, stride=2, padding=1)),
            nn.InstanceNorm2d(8, track_running_stats=False),
            nn.ReLU(True),
            nn.ReflectionPad2d(3),
            nn.Conv2d(8, 1, kernel_size=7),
        )

    def forward(self, x):
        x = self.encoder(x)
        x = self.middle(x)
        x = self.decoder(x)
        return torch.sigmoid(x)


class Discriminator(nn.Module):
    def __init__(self, in_channels, use_sigmoid=True):
        super(Discriminator, self).__init__()
        self.use_sigmoid = use_sigmoid
        self.conv1 = nn.Sequential(spectral_norm(nn.Conv2d(in_channels, 8, 4, 2, 1, bias=False)),
                                   nn.LeakyReLU(0.2, inplace=True))
        self.conv2 = nn.Sequential(spectral_norm(nn.Conv2d(8, 16, 4, 2, 1, bias=False)),
                                   nn.LeakyReLU(0.2, inplace=True))
        self.conv3 = nn.Sequential(spectral_norm(nn.Conv2d(16, 32, 4, 1, 1, bias=False)),
                                   nn.LeakyReLU(0.2, inplace=True))
        self.conv4 = nn.Sequential(spectral_norm(nn.Conv2d(32, 1, 4, 1, 1, bias=False)))

    def forward(self, x):
        conv1 = self.conv1(x)
        conv2 = self.conv2(conv1)
        conv3 = self.conv3(conv2)
        conv4 = self.conv4(conv3)
        outputs = conv4
        if self.use_sigmoid:
            outputs = torch.sigmoid(conv4)
        return outputs, [conv1, conv2, conv3, conv4]


class EdgeModel(nn.Module):
    def __init__(self, config):
        super(EdgeModel, self).__init__()
        self.config = config
        self.iteration = 0
        generator = EdgeGenerator(use_spectral_norm=True)
        discriminator = Discriminator(in_channels=2, use_sigmoid=config.GAN_LOSS != 'hinge')
        self.add_module('generator', generator)
        self.add_module('discriminator', discriminator)
        self.add_module('l1_loss', nn.L1Loss())
        self.add_module('adversarial_loss', AdversarialLoss(type=config.GAN_LOSS))
        self.gen_optimizer = optim.Adam(params=generator.parameters(), lr=float(config.LR),
                                        betas=(config.BETA1, config.BETA2))
        self.dis_optimizer = optim.Adam(params=discriminator.parameters(),
                                        lr=float(config.LR) * float(config.D2G_LR),
                                        betas=(config.BETA1, config.BETA2))

    def process(self, images, edges, masks):
        self.iteration += 1

        # zero optimizers
        self.gen_optimizer.zero_grad()
        self.dis_optimizer.zero_grad()

        # process outputs
        outputs = self(images, edges, masks)
        gen_loss = 0
        dis_loss = 0

        # discriminator loss
        dis_input_real = torch.cat((images, edges), dim=1)
        dis_input_fake = torch.cat((images, outputs.detach()), dim=1)
        dis_real, dis_real_feat = self.discriminator(dis_input_real)
        dis_fake, dis_fake_feat = self.discriminator(dis_input_fake)
        dis_real_loss = self.adversarial_loss(dis_real, True, True)
        dis_fake_loss = self.adversarial_loss(dis_fake, False, True)
        dis_loss += (dis_real_loss + dis_fake_loss) / 2

        # generator adversarial loss
        gen_input_fake = torch.cat((images, outputs), dim=1)
        gen_fake, gen_fake_feat = self.discriminator(gen_input_fake)
        gen_gan_loss = self.adversarial_loss(gen_fake, True, False)
        gen_loss += gen_gan_loss

        # generator feature matching loss
        gen_fm_loss = 0
        for i in range(len(dis_real_feat)):
            gen_fm_loss += self.l1_loss(gen_fake_feat[i], dis_real_feat[i].detach())
        gen_fm_loss = gen_fm_loss * self.config.FM_LOSS_WEIGHT
        gen_loss += gen_fm_loss

        logs = [("l_d1", dis_loss.item()), ("l_g1", gen_gan_loss.item()), ("l_fm", gen_fm_loss.item())]
        return outputs, gen_loss, dis_loss, logs

    def forward(self, images, edges, masks):
        edges_masked = (edges * (1 - masks))
        images_masked = (images * (1 - masks)) + masks
        inputs = torch.cat((images_masked, edges_masked, masks), dim=1)
        return self.generator(inputs)

    def backward(self, gen_loss=None, dis_loss=None):
        if gen_loss is not None:  # gen_loss first, not the dis_loss
            gen_loss.backward()
        self.gen_optimizer.step()

        self.dis_optimizer.zero_grad()  # drop what gen_loss left in the discriminator
        if dis_loss is not None:
            dis_loss.backward()
        self.dis_optimizer.step()


def train(edge_model, batches):
    edge_model.train()
    for images, edges, masks in batches:
        outputs, gen_loss, dis_loss, logs = edge_model.process(images, edges, masks)
        edge_model.backward(gen_loss, dis_loss)
        print(edge_model.iteration, logs)


torch.manual_seed(0)
batches = [(torch.rand(2, 1, 16, 16), (torch.rand(2, 1, 16, 16) > 0.8).float(),
            (torch.rand(2, 1, 16, 16) > 0.5).float()) for _ in range(2)]
train(EdgeModel(Config()), batches)
