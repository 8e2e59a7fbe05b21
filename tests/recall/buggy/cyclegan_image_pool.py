"""CycleGAN-style image pool: the discriminator is trained on a fake drawn from a history of
generated images. The pool stores the generator's outputs as they are, so a fake from an earlier
iteration brings back a generator graph that the earlier generator step already freed."""
import torch
import torch.nn as nn


class ImagePool:
    def __init__(self, size):
        self.size = size
        self.images = []

    def query(self, image):
        if len(self.images) < self.size:
            self.images.append(image)
            return image
        old = self.images.pop(0)
        self.images.append(image)
        return old


G = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 3, padding=1), nn.Tanh())
D = nn.Sequential(nn.Conv2d(1, 4, 3, stride=2), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(36, 1))
opt_G = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_D = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
mse = nn.MSELoss()
pool = ImagePool(size=1)

for it in range(3):
    real_A, real_B = torch.randn(2, 1, 8, 8), torch.randn(2, 1, 8, 8)
    fake_B = G(real_A)
    opt_G.zero_grad()
    loss_G = mse(D(fake_B), torch.ones(2, 1)) + 10.0 * (fake_B - real_A).abs().mean()
    loss_G.backward()
    opt_G.step()
    fake_pooled = pool.query(fake_B)
    opt_D.zero_grad()
    loss_D = 0.5 * (mse(D(real_B), torch.ones(2, 1)) + mse(D(fake_pooled), torch.zeros(2, 1)))
    loss_D.backward()  # expect: GG101
    opt_D.step()
