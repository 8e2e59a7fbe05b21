"""GAN trainer class: the discriminator step sees fake.detach(), the generator step the graph."""
import torch
import torch.nn as nn


class GANTrainer:
    def __init__(self):
        self.G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 6))
        self.D = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        self.opt_G = torch.optim.Adam(self.G.parameters(), lr=2e-4)
        self.opt_D = torch.optim.Adam(self.D.parameters(), lr=2e-4)
        self.bce = nn.BCEWithLogitsLoss()

    def step(self, real):
        fake = self.G(torch.randn(len(real), 4))
        d_loss = self.bce(self.D(real), torch.ones(len(real), 1)) + \
            self.bce(self.D(fake.detach()), torch.zeros(len(real), 1))
        self.opt_D.zero_grad()
        d_loss.backward()
        self.opt_D.step()
        g_loss = self.bce(self.D(fake), torch.ones(len(real), 1))
        self.opt_G.zero_grad()
        g_loss.backward()
        self.opt_G.step()


trainer = GANTrainer()
for it in range(2):
    trainer.step(torch.randn(8, 6) + 2.0)
