# Source: https://github.com/knazeri/edge-connect/issues/188
"""EdgeConnect (src/models.py) trained on torch >= 1.5, fixed: the thread's answer is that the
backward must come before the optimizer step that rewrites what it walks. Here the generator's
loss, computed through the discriminator, is backwarded first, then the generator steps; the
discriminator's .grad is cleared of what that backward left and its own loss, built on
`outputs.detach()`, is backwarded before its step (backwarding both before both steps, as some
forks do, would step the discriminator with the generator's adversarial gradient too). The
models and losses follow the repository, small, on random images, edges and masks."""
import torch
import torch.nn as nn
import torch.optim as optim


class AdversarialLoss(nn.Module):
    def __init__(self):
        super(AdversarialLoss, self).__init__()
        self.criterion = nn.BCELoss()

    def __call__(self, outputs, is_real, is_disc=None):
        labels = torch.ones_like(outputs) if is_real else torch.zeros_like(outputs)
        return self.criterion(outputs, labels)


class EdgeGenerator(nn.Module):
    def __init__(self, residual_blocks=2):
        super(EdgeGenerator, self).__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.InstanceNorm2d(16), nn.ReLU(True))
        self.middle = nn.Sequential(*[nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(True))
                                      for _ in range(residual_blocks)])
        self.decoder = nn.Conv2d(16, 1, 3, padding=1)

    def forward(self, x):
        return torch.sigmoid(self.decoder(self.middle(self.encoder(x))))


class Discriminator(nn.Module):
    def __init__(self, in_channels):
        super(Discriminator, self).__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(in_channels, 16, 4, stride=2, padding=1), nn.LeakyReLU(0.2, True))
        self.conv2 = nn.Sequential(nn.Conv2d(16, 32, 4, stride=2, padding=1), nn.LeakyReLU(0.2, True))
        self.conv3 = nn.Conv2d(32, 1, 4, stride=1, padding=1)

    def forward(self, x):
        conv1 = self.conv1(x)
        conv2 = self.conv2(conv1)
        outputs = torch.sigmoid(self.conv3(conv2))
        return outputs, [conv1, conv2]


class EdgeModel(nn.Module):
    def __init__(self):
        super(EdgeModel, self).__init__()
        self.generator = EdgeGenerator()
        self.discriminator = Discriminator(in_channels=2)
        self.l1_loss = nn.L1Loss()
        self.adversarial_loss = AdversarialLoss()
        self.gen_optimizer = optim.Adam(self.generator.parameters(), lr=1e-4, betas=(0.0, 0.9))
        self.dis_optimizer = optim.Adam(self.discriminator.parameters(), lr=1e-5, betas=(0.0, 0.9))

    def process(self, images, edges, masks):
        self.gen_optimizer.zero_grad()
        self.dis_optimizer.zero_grad()
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
        gen_loss += gen_fm_loss * 10.0
        return outputs, gen_loss, dis_loss

    def forward(self, images, edges, masks):
        edges_masked = edges * (1 - masks)
        images_masked = images * (1 - masks) + masks
        inputs = torch.cat((images_masked, edges_masked, masks), dim=1)
        return self.generator(inputs)

    def backward(self, gen_loss=None, dis_loss=None):
        if gen_loss is not None:
            gen_loss.backward()
        self.gen_optimizer.step()
        self.dis_optimizer.zero_grad()  # (what gen_loss left in the discriminator's .grad)
        if dis_loss is not None:
            dis_loss.backward()
        self.dis_optimizer.step()


torch.manual_seed(0)
model = EdgeModel()
model.train()
for iteration in range(2):
    images = torch.rand(2, 1, 16, 16)
    edges = (torch.rand(2, 1, 16, 16) > 0.8).float()
    masks = (torch.rand(2, 1, 16, 16) > 0.5).float()
    outputs, gen_loss, dis_loss = model.process(images, edges, masks)
    model.backward(gen_loss, dis_loss)
    print(iteration, gen_loss.item(), dis_loss.item())
