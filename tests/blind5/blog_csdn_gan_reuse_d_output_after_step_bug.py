# Source: https://blog.csdn.net/odbej/article/details/125158288
"""The CSDN post "GAN训练中的inplace问题(pytorch)" (the in-place error in GAN training): one forward
g = G(t), d = D(g) serves both losses; lossD is backwarded with retain_graph=True so that lossG can
reuse d, optimD.step() runs in between, and lossG.backward() then needs D's weights as they were
when d was computed: "optimizer.step() is an in-place operation", and torch raises "one of the
variables needed for gradient computation has been modified by an inplace operation". The post
explains the mechanism and points to the pattern; the program is a small GAN on 1-D Gaussian data
(MLP generator and discriminator, BCE losses, Adam) trained in the order the post describes."""
import torch
import torch.nn as nn

G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
D = nn.Sequential(nn.Linear(1, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())
optimG = torch.optim.Adam(G.parameters(), lr=1e-3)
optimD = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCELoss()


def train_step(x):
    t = torch.randn(x.size(0), 4)
    ones = torch.ones(x.size(0), 1)
    zeros = torch.zeros(x.size(0), 1)

    g = G(t)
    d = D(g)
    lossD = bce(D(x), ones) + bce(d, zeros)
    optimD.zero_grad()
    lossD.backward(retain_graph=True)
    optimD.step()

    lossG = bce(d, ones)
    optimG.zero_grad()
    lossG.backward()  # expect: GG103
    optimG.step()
    return lossD.item(), lossG.item()


for it in range(3):
    real = torch.randn(16, 1) * 0.5 + 2.0
    print(it, train_step(real))
