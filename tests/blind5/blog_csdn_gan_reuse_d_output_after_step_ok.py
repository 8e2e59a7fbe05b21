# Source: https://blog.csdn.net/odbej/article/details/125158288
"""The post's fix: lossG gets its own graph, built after optimD.step() (`D(g)` recomputed with
the updated discriminator), and lossD takes the fake batch detached, `D(g.detach())`, so its
backward neither needs retain_graph nor frees the generator's graph that lossG walks. Same GAN,
data and optimisers."""
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
    lossD = bce(D(x), ones) + bce(D(g.detach()), zeros)
    optimD.zero_grad()
    lossD.backward()
    optimD.step()

    lossG = bce(D(g), ones)
    optimG.zero_grad()
    lossG.backward()
    optimG.step()
    return lossD.item(), lossG.item()


for it in range(3):
    real = torch.randn(16, 1) * 0.5 + 2.0
    print(it, train_step(real))
