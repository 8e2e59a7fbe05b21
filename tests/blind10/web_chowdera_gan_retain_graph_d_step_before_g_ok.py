# Source: https://chowdera.com/2020/11/202011092352588940.html
"""The post's other update strategy, which is the right one: the discriminator is trained on
gen_imgs.detach(), so its backward stops at the generator and needs no retain_graph, and the
generator's loss comes from a fresh discriminator pass after optimizer_D.step()."""
import torch
import torch.nn as nn

torch.manual_seed(0)
device = "cpu"
latent_dim, img_dim = 8, 16


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(latent_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, img_dim), nn.Tanh())

    def forward(self, z):
        return self.model(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(img_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1), nn.Sigmoid())

    def forward(self, img):
        return self.model(img)


generator, discriminator = Generator().to(device), Discriminator().to(device)
adversarial_loss = nn.BCELoss()
optimizer_G = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))
dataloader = [torch.rand(6, img_dim) * 2 - 1 for _ in range(3)]

for epoch in range(2):
    for i, imgs in enumerate(dataloader):
        valid = torch.Tensor(imgs.size(0), 1).fill_(1.0).to(device)
        fake = torch.Tensor(imgs.size(0), 1).fill_(0.0).to(device)

        # train the discriminator
        real_imgs = imgs.to(device)
        z = torch.randn((imgs.shape[0], latent_dim)).to(device)
        gen_imgs = generator(z)
        pred_gen = discriminator(gen_imgs.detach())
        pred_real = discriminator(real_imgs)

        optimizer_D.zero_grad()
        real_loss = adversarial_loss(pred_real, valid)
        fake_loss = adversarial_loss(pred_gen, fake)
        d_loss = (real_loss + fake_loss) / 2
        d_loss.backward()
        optimizer_D.step()

        # train the generator through the updated discriminator
        optimizer_G.zero_grad()
        g_loss = adversarial_loss(discriminator(gen_imgs), valid)
        g_loss.backward()
        optimizer_G.step()
        print(epoch, i, d_loss.item(), g_loss.item())
