# Source: https://discuss.pytorch.org/t/why-inplace-is-by-default-set-to-false-for-nn-leakyrelu/111246
"""The answer's point: keep the default `inplace=False` unless torch accepts the in-place
version. The Dropout goes back to its default and returns a new tensor instead of overwriting the
activation that the in-place LeakyReLU saved; the LeakyReLU itself may stay in place."""
import torch
import torch.nn as nn


class Discriminator(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.fc1 = nn.Linear(n_in, 1024)
        self.act = nn.LeakyReLU(0.2, inplace=True)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(1024, 1)

    def forward(self, x):
        h = self.act(self.fc1(x))
        h = self.drop(h)
        return self.fc2(h)


netD = Discriminator(n_in=64)
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
criterion = nn.BCEWithLogitsLoss()

for step in range(3):
    real = torch.randn(16, 64) + 1.0
    fake = torch.randn(16, 64)
    x = torch.cat([real, fake])
    labels = torch.cat([torch.ones(16, 1), torch.zeros(16, 1)])
    optimizerD.zero_grad()
    loss = criterion(netD(x), labels)
    loss.backward()
    optimizerD.step()
    print(step, loss.item())
