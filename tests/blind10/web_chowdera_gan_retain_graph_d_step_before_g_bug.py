# Source: https://chowdera.com/2020/11/202011092352588940.html
"""The post on detach() versus retain_graph=True when training a GAN: its "train the discriminator
first" strategy runs generator and discriminator once, backwards d_loss with retain_graph=True,
steps optimizer_D, and then backwards g_loss computed from the same pred_gen scores. The post
says this works; with torch 2.13 the generator's backward walks the retained discriminator graph,
whose saved weights optimizer_D.step() has just updated in place, and raises the in-place error.
A small MLP GAN on random "images", the loop of the post kept (labels, losses, the two optimizers)."""
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
        pred_gen = discriminator(gen_imgs)
        pred_real = discriminator(real_imgs)

        optimizer_D.zero_grad()
        real_loss = adversarial_loss(pred_real, valid)
        fake_loss = adversarial_loss(pred_gen, fake)
        d_loss = (real_loss + fake_loss) / 2
        d_loss.backward(retain_graph=True)
        optimizer_D.step()

        # train the generator on the scores already computed
        optimizer_G.zero_grad()
        g_loss = adversarial_loss(pred_gen, valid)
        g_loss.backward()  # expect: GG103
        optimizer_G.step()
        print(epoch, i, d_loss.item(), g_loss.item())
