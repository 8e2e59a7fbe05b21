# Source: https://whosebug.com/question/5232549/How-does-PyTorch-s-loss-backward-work-when-retain-graph-True-is-specified
"""A Q&A question (a mirror of Stack Overflow's "How does PyTorch's loss.backward() work when
retain_graph=True is specified?"): a GAN whose generator is updated first, then the
discriminator, with loss_g and loss_d both computed from one forward pass (the discriminator's
score of the generated batch feeds both). The asker's update code
`optim_g.zero_grad(); loss_g.backward(); optim_g.step(); optim_d.zero_grad(); loss_d.backward();
optim_d.step()` raises "Trying to backward through the graph a second time" in loss_d.backward():
loss_g.backward() freed the graph of D(G(z)) that loss_d also hangs on. The networks are small
MLPs on random data; the losses are the standard BCE ones the question computes."""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, nz=8, nout=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(), nn.Linear(32, nout), nn.Tanh())

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self, nin=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(nin, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


gen, disc = Generator(), Discriminator()
optim_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
optim_d = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
criterion = nn.BCEWithLogitsLoss()

for step in range(3):
    real = torch.randn(8, 16)
    z = torch.randn(8, 8)

    # computing loss_g and loss_d...
    fake = gen(z)
    pred_fake = disc(fake)
    pred_real = disc(real)
    loss_g = criterion(pred_fake, torch.ones_like(pred_fake))
    loss_d = (criterion(pred_real, torch.ones_like(pred_real)) +
              criterion(pred_fake, torch.zeros_like(pred_fake))) / 2

    optim_g.zero_grad()
    loss_g.backward()
    optim_g.step()

    optim_d.zero_grad()
    loss_d.backward()  # expect: GG101
    optim_d.step()
    print(step, loss_g.item(), loss_d.item())
