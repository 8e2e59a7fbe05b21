"""A GAN trainer class: train_discriminator() scores the generator's batch without detaching it,
then train_generator() reuses the same batch."""
import torch
import torch.nn as nn


class GANTrainer:
    def __init__(self, z_dim=4, x_dim=6):
        self.z_dim = z_dim
        self.G = nn.Sequential(nn.Linear(z_dim, 16), nn.ReLU(), nn.Linear(16, x_dim))
        self.D = nn.Sequential(nn.Linear(x_dim, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        self.opt_G = torch.optim.Adam(self.G.parameters(), lr=2e-4)
        self.opt_D = torch.optim.Adam(self.D.parameters(), lr=2e-4)
        self.bce = nn.BCEWithLogitsLoss()

    def train_discriminator(self, real, fake):
        ones, zeros = torch.ones(len(real), 1), torch.zeros(len(fake), 1)
        loss = self.bce(self.D(real), ones) + self.bce(self.D(fake), zeros)
        self.opt_D.zero_grad()
        loss.backward()
        self.opt_D.step()
        return loss.item()

    def train_generator(self, fake):
        loss = self.bce(self.D(fake), torch.ones(len(fake), 1))
        self.opt_G.zero_grad()
        loss.backward()  # expect: GG101
        self.opt_G.step()
        return loss.item()

    def step(self, real):
        fake = self.G(torch.randn(len(real), self.z_dim))
        return self.train_discriminator(real, fake), self.train_generator(fake)


trainer = GANTrainer()
for it in range(2):
    trainer.step(torch.randn(8, 6) + 2.0)
